#!/usr/bin/env sysbench
-- A sysbench test held at its start line: the test in BENCHLIB_SYSBENCH_TEST (a stock test's path
-- or one of benchlib's), each of whose threads, once its thread_init has connected, says so on
-- stdout and then waits for one byte from the FIFO in BENCHLIB_SYSBENCH_GATE. The harness opens
-- its measured window when every thread has connected, then writes one byte per thread; each
-- thread says when its last event is done, before its thread_done disconnects. So the window
-- holds the whole run and neither the connection set-up nor the tear-down (which would weigh
-- more the shorter the step and the more its threads), whatever the host's scheduling delays in
-- reading sysbench's output.

dofile(os.getenv("BENCHLIB_SYSBENCH_TEST"))

local connect = thread_init

function thread_init(...)
   connect(...)
   io.stdout:write("benchlib: connected\n")
   io.stdout:flush()
   local gate = assert(io.open(os.getenv("BENCHLIB_SYSBENCH_GATE"), "rb"))
   gate:setvbuf("no")  -- one byte per read(2): a buffered read could take every thread's byte
   assert(gate:read(1), "benchlib: the gate closed before this thread's byte")
   gate:close()
end

local disconnect = thread_done

function thread_done(...)
   io.stdout:write("benchlib: done\n")
   io.stdout:flush()
   if disconnect then
      disconnect(...)
   end
end
