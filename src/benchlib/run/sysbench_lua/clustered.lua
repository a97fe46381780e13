#!/usr/bin/env sysbench
-- Seed 003's query shapes on sysbench's own sbtest tables (prepared by oltp_common):
--   points: SELECT ... WHERE id IN (N random ids)
--   range:  SELECT ... WHERE id BETWEEN x AND x + N
--   update_inlist: UPDATE ... SET c = ? WHERE id IN (N random ids)
-- covered=on selects only the primary key column, which a heap engine answers from its PK index
-- alone (index-only scan) while a clustered engine reads the PK index leaves that hold whole rows;
-- covered=off also selects c, which only the clustered layout has beside the key.

require("oltp_common")

sysbench.cmdline.options.shape = {"points, range or update_inlist", "points"}
sysbench.cmdline.options.covered = {"Select only the primary key column", true}
sysbench.cmdline.options.random_points = {"Ids per IN list, or rows per range", 10}

local C_TEMPLATE = "###########-###########-###########-###########-###########-" ..
   "###########-###########-###########-###########-###########"

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   stmt, params = {}, {}
   local n = sysbench.opt.random_points
   local columns = sysbench.opt.covered and "id" or "id, c"
   local inlist = string.rep("?, ", n - 1) .. "?"
   for t = 1, sysbench.opt.tables do
      local sql
      if sysbench.opt.shape == "points" then
         sql = string.format("SELECT %s FROM sbtest%d WHERE id IN (%s)", columns, t, inlist)
      elseif sysbench.opt.shape == "range" then
         sql = string.format("SELECT %s FROM sbtest%d WHERE id BETWEEN ? AND ?", columns, t)
      elseif sysbench.opt.shape == "update_inlist" then
         sql = string.format("UPDATE sbtest%d SET c = ? WHERE id IN (%s)", t, inlist)
      else
         error("unknown --shape=" .. tostring(sysbench.opt.shape))
      end
      stmt[t] = con:prepare(sql)
      params[t] = {}
      if sysbench.opt.shape == "update_inlist" then
         params[t][1] = stmt[t]:bind_create(sysbench.sql.type.CHAR, 120)
      end
      local first = #params[t]
      local count = (sysbench.opt.shape == "range") and 2 or n
      for j = 1, count do
         params[t][first + j] = stmt[t]:bind_create(sysbench.sql.type.INT)
      end
      stmt[t]:bind_param(unpack(params[t]))
   end
end

function thread_done()
   for t = 1, sysbench.opt.tables do
      stmt[t]:close()
   end
   con:disconnect()
end

function event()
   local t = sysbench.rand.uniform(1, sysbench.opt.tables)
   local p = params[t]
   local n = sysbench.opt.random_points
   if sysbench.opt.shape == "range" then
      local low = sysbench.rand.default(1, sysbench.opt.table_size)
      p[1]:set(low)
      p[2]:set(low + n - 1)
   else
      local first = 0
      if sysbench.opt.shape == "update_inlist" then
         p[1]:set_rand_str(C_TEMPLATE)
         first = 1
      end
      for j = 1, n do
         p[first + j]:set(sysbench.rand.default(1, sysbench.opt.table_size))
      end
   end
   stmt[t]:execute()
end
