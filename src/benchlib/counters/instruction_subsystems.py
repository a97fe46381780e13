"""Which subsystem of an engine a function belongs to: the map, as data, per engine family.

Each rule is (subsystem, function-name pattern, object pattern); a function takes the subsystem
of the first rule whose patterns both match (`re.search`, so anchor with ^ where a prefix is
meant), first the engine's own rules (looked up like dialects: engine key, its name without
version, the engine it is a variant of, its family), then the rules every engine shares (memory
allocation, crypto, libc, the Python interpreter of an embedded engine's process); "other" takes
the rest. Names are callgrind's: demangled C++ with their arguments, and `0x...` for a function
a stripped library does not name (Debian's libsqlite3 keeps only its exported ones), which fall
to "other" unless their object says more (libcrypto).

Subsystems (one list for every engine, so that bars are comparable side by side):
- WAL / redo log: building, inserting and flushing log records (PostgreSQL's XLog, InnoDB's redo
  log and mini-transaction commit, SQLite's journal and WAL, DuckDB's and RocksDB's WAL, MySQL's
  binary log).
- B-tree / index: searching and changing index pages (nbtree, InnoDB's btr/page layer, SQLite's
  btree.c, DuckDB's ART index).
- table storage: the rows themselves (PostgreSQL's heap, InnoDB's row layer on its clustered
  index, MyRocks' record packing, DuckDB's row groups and column segments).
- buffer pool: finding, pinning and writing back pages (and the file I/O under it).
- locks / latches: row and table locks, lightweight locks, mutexes, spin locks.
- transactions / MVCC: snapshots, visibility, undo, commit bookkeeping.
- LSM memtable / compaction: MyRocks' RocksDB memtable, flushes and compactions.
- executor: running a plan (PostgreSQL's Exec*, MySQL's handler calls and iterators, SQLite's
  VDBE, DuckDB's physical operators and vectors).
- parser / planner: parsing, binding, rewriting, planning, code generation.
- network / protocol: reading commands, sending results, the socket calls.
- memory allocation: the engines' allocators and libc's malloc family.
- crypto / random: libcrypto/libssl (PostgreSQL's gen_random_uuid draws its bytes there), random
  number generators.
- Python interpreter / driver: an embedded engine's process is a Python interpreter: its own
  code, its modules and the DB-API driver.
- libc: the rest of the C library (string and memory copies, system call wrappers).
- other: everything no rule names, shown, never dropped."""
from __future__ import annotations

import re
from functools import lru_cache

import pandas as pd

WAL = "WAL / redo log"
BTREE = "B-tree / index"
TABLE = "table storage"
BUFFER = "buffer pool"
LOCKS = "locks / latches"
TRANSACTIONS = "transactions / MVCC"
LSM = "LSM memtable / compaction"
EXECUTOR = "executor"
PARSER = "parser / planner"
NETWORK = "network / protocol"
MEMORY = "memory allocation"
CRYPTO = "crypto / random"
PYTHON = "Python interpreter / driver"
LIBC = "libc"
OTHER = "other"

# Drawing order, bottom of a stack first: the storage engine, then the SQL layer, then the rest.
SUBSYSTEMS = (WAL, BTREE, TABLE, BUFFER, LOCKS, TRANSACTIONS, LSM, EXECUTOR, PARSER, NETWORK, MEMORY, CRYPTO,
              PYTHON, LIBC, OTHER)

ANY = ""  # matches every object

POSTGRES = (
    (WAL, r"^(XLog|xlog|XLOG|WAL|CopyXLogRecordToWAL|ReserveXLogInsertLocation|log_heap_|heap_xlog|"
          r"pg_comp_crc32c|issue_xlog_fsync|XLogRecordAssemble|AdvanceXLInsertBuffer|GetXLogBuffer|"
          r"GetRedoRecPtr|GetXLogInsertRecPtr|GetInsertRecPtr)", ANY),
    (BTREE, r"^(_bt|bt[a-z]|index_(getnext|insert|fetch|beginscan|endscan|rescan|getbitmap)|IndexScan|"
            r"ExecInsertIndexTuples|FormIndexDatum|index_form_tuple)", ANY),
    (TABLE, r"^(heap|Heap|RelationPutHeapTuple|RelationGetBufferForTuple|PageAdd|PageGet|PageInit|PageRepair|"
            r"PageIndex|toast_|heap_page_prune|lazy_|vacuum|visibilitymap_|fsm_|RecordPageWithFreeSpace|"
            r"GetPageWithFreeSpace|table_|tuple_|slot_deform|tts_buffer|tts_heap|nocachegetattr|"
            r"datum_image_eq|RelationGetIndexAttrBitmap|HeapDetermineColumnsInfo)", ANY),
    (BUFFER, r"^(ReadBuffer|StartReadBuffer|ReadBuffer_common|PinBuffer|UnpinBuffer|ReleaseBuffer|"
             r"MarkBuffer|BufTable|BufferAlloc|BufferGet|LockBuffer|UnlockReleaseBuffer|StrategyGetBuffer|"
             r"FlushBuffer|GetVictimBuffer|IncrBufferRefCount|ResourceOwner(Enlarge|Remember|Forget)Buffer|"
             r"smgr|md[a-z]|mdwrite|FileWrite|FileRead|WaitReadBuffers|PinBufferForBlock|"
             r"ExtendBufferedRel|BufferIsValid|ConditionalLockBuffer|local_buffer|LocalBuffer|"
             r"ReleaseAndReadBuffer|BufferIsPermanent|IOContextForStrategy|pgstat_count_io_op|read_stream)", ANY),
    (LOCKS, r"^(LWLock|LockAcquire|LockRelease|LockRelation|UnlockRelation|LockTuple|XactLockTable|"
            r"s_lock|SpinLock|LockBufHdr|LockCheckConflicts|GrantLock|SetupLockInTable|"
            r"LockHeldByMe|FastPath|ConditionVariable|pg_atomic|perform_spin_delay|"
            r"ProcLock|LockTagHashCode|LockAcquireExtended|CheckDeadLock|CheckForSerializableConflict|"
            r"PredicateLock|CheckTargetForConflicts)", ANY),
    (TRANSACTIONS, r"^(GetSnapshotData|Snapshot|TransactionId|TransactionLog|Xact|StartTransaction|"
                   r"CommitTransaction|AbortTransaction|RecordTransactionCommit|GetCurrentTransaction|"
                   r"GetNewTransactionId|ProcArray|XidIn|TransactionIdIsCurrent|clog|SimpleLru|"
                   r"AssignTransactionId|GetTopTransactionId|PushActiveSnapshot|PopActiveSnapshot|"
                   r"RegisterSnapshot|UnregisterSnapshot|CommandCounterIncrement|GlobalVis|"
                   r"IsSubxactTopXidLogPending|TransactionIdPrecedes|TransactionIdFollows)", ANY),
    (EXECUTOR, r"^(Exec|exec_|ExecInterpExpr|slot_|tts_|MakeTupleTableSlot|ExecProcNode|standard_Executor|"
               r"Executor|CreateExecutorState|FreeExecutorState|InitPlan|ExecutePlan|"
               r"ExecEvalExpr|int8|float8|int4|nextval|setval|ProcessQuery|PortalRun|generate_series|"
               r"PortalStart|PortalDrop|CreatePortal|CreateQueryDesc|FreeQueryDesc)", ANY),
    (PARSER, r"^(raw_parser|base_yy|core_yy|scanner_|pg_parse_query|parse_analyze|transform|pg_analyze|"
             r"pg_plan|planner|standard_planner|subquery_planner|grouping_planner|query_planner|"
             r"create_plan|make_one_rel|set_base_rel|set_.*pathlist|add_path|cost_|create_.*path|"
             r"QueryRewrite|RewriteQuery|fireRIRrules|preprocess_|expression_planner|eval_const|"
             r"pg_rewrite|make_|build_|addRangeTableEntry|parserOpenTable|makeVar|exprType|exprTypmod|"
             r"lookup_|get_relation_info|estimate_rel_size|SearchSysCache|SearchCatCache|CatalogCache|"
             r"RelationIdGetRelation|relation_open|try_relation_open|RangeVarGetRelid|"
             r"LookupTypeName|typenameType|func_get_detail|oper_select|plan_|setrefs|set_plan_refs|"
             r"fix_|finalize_plan|select_common_type|coerce_|can_coerce)", ANY),
    (NETWORK, r"^(pq_|secure_|socket_|internal_flush|printtup|SendRowDescription|ReadyForQuery|"
              r"ReadCommand|SocketBackend|EndCommand|BeginCommand|PostgresMain|exec_simple_query|"
              r"WaitEventSetWait|WaitLatchOrSocket|be_tls|ProcessClientRead|ProcessClientWrite)", ANY),
    (MEMORY, r"^(palloc|pfree|repalloc|AllocSet|MemoryContext|Generation|Slab|BumpAlloc|pnstrdup|pstrdup|"
             r"MemoryChunk|mcxt)", ANY),
    (CRYPTO, r"^(pg_strong_random|gen_random_uuid|pg_prng|pg_sha|pg_md5|pg_cryptohash|pg_hmac|"
             r"scram_)", ANY),
)

MYSQL = (
    (WAL, r"^(log_|mtr_t::commit|mtr_t::finish_write|mtr_t::log|mlog_|mtr_t::Command|mtr_write_log|"
          r"recv_|MYSQL_BIN_LOG|binlog|Binlog|Log_event|Rows_log_event|THD::binlog|"
          r"log_buffer|log_t::|Log_test|redo_|page_zip_write)", ANY),
    (BTREE, r"^(row_ins_sec|row_upd_sec|row_search_index_entry|btr_|page_cur_|page_dir_|page_rec_|page_copy|page_create|page_mem|page_zip|page_|cmp_|"
            r"rec_|dict_index_|row_search_on_row_ref|btr_pcur|ha_search|ha_insert|ahi_|btr_search)", ANY),
    (TABLE, r"^(row_|Row_sel|row_sel|upd_|ins_node|dtuple_|dfield_|trx_undo_report|"
            r"Field_.*::(store|val_|pack|unpack)|ha_innobase::(write_row|update_row|delete_row|"
            r"general_fetch|index_read|rnd_next|index_next|index_first))", ANY),
    (BUFFER, r"^(buf_|Buf_|fil_|os_file|os_aio|AIO::|Fil_|fsp_|fseg_|xdes_|ibuf_|flst_)", ANY),
    (LOCKS, r"^(lock_|Lock_|rw_lock_|sync_|mutex_|srw_lock|ssux_lock|sux_lock|PolicyMutex|TTASEventMutex|"
            r"OSMutex|ib_mutex|MDL_|inline_mysql_mutex|inline_mysql_rwlock|my_mutex|native_mutex|"
            r"native_rw|rw_pr_|mysql_mutex|mysql_rwlock|thr_lock|ut_delay|Lock_guard|"
            r"std::mutex|std::unique_lock|group_commit_lock|lock_sys)", ANY),
    (TRANSACTIONS, r"^(trx_|Trx|read_view|ReadView|MVCC|purge|Purge|que_|trans_|ha_commit|ha_rollback|"
                   r"innobase_commit|innobase_rollback|innobase_trx|Transaction_ctx|commit_|trx_sys)", ANY),
    (EXECUTOR, r"^(handler::|ha_innobase::|Item_|Item::|TABLE::|Field_|Field::|fill_record|write_record|"
               r"mysql_insert|mysql_update|mysql_delete|Sql_cmd_|Query_result|.*Iterator::|JOIN::exec|"
               r"do_select|evaluate_join_record|sub_select|end_send|Table_scan|Query_expression::execute|"
               r"innobase_|Copy_field|store_record|restore_record|"
               r"Query_block::.*exec|COPY_INFO|"
               r"mysql_execute_command|mysql_execute_statement|THD::send|THD::store|Protocol::store)", ANY),
    (PARSER, r"^(MYSQLparse|my_sql_parser|MYSQLlex|Lex_input_stream|lex_one_token|lex_start|lex_end|"
             r"THD::sql_parser|parse_sql|PT_|Parse_tree|Parse_context|JOIN::optimize|JOIN::prepare|"
             r"Optimize|make_join|Query_block::prepare|Query_block::setup|SELECT_LEX|st_select_lex|"
             r"setup_fields|setup_tables|find_field_in|open_tables|open_table|open_and_lock|"
             r"Sql_cmd_dml::prepare|Item::fix_fields|Item_.*::fix_fields|.*::itemize|.*::contextualize|"
             r"mysql_parse|LEX::|Lex_|optimize_|Optimize_|get_table_share|tdc_|Table_cache|"
             r"MYSQL_LEX|Sql_cmd_.*::prepare|Query_block::|Query_expression::prepare|JOIN::|"
             r"mysql_prepare|check_access|check_table_access|check_grant|acl_|Security_context|"
             r"find_table_in|dd::|Dictionary_client|dict_table_|dict_sys|Table_ref|table_def)", ANY),
    (NETWORK, r"^(vio_|Vio|my_net_|net_|NET|Protocol_classic|Protocol_text|Protocol_binary|Protocol::|"
              r"cli_|do_command|dispatch_command|handle_connection|THD::send_result|send_ok|"
              r"Diagnostics_area|my_ok|my_eof|net_flush|net_write|net_store|Connection_handler|"
              r"socket_|mysql_socket|inline_mysql_socket|ssl_|wait_for_data)", ANY),
    (MEMORY, r"^(my_malloc|my_free|my_realloc|my_raw_malloc|my_multi_malloc|mem_heap_|MEM_ROOT|Mem_root|"
             r"alloc_root|free_root|memdup_root|strmake_root|sql_alloc|ut_allocator|ut::malloc|"
             r"ut::free|ut::detail|ut_malloc|ut_free|operator new|operator delete|sql_calloc|"
             r"my_memdup|my_strdup|Mem_root_array|THD::alloc|THD::mem_)", ANY),
    (CRYPTO, r"^(my_rnd|rand_|my_sha|sha256|my_md5|generate_uuid|mysql_random|Uuid)", ANY),
)

# MyRocks: RocksDB under the MariaDB server; the SQL layer's rules follow its own.
MYROCKS = (
    (WAL, r"^rocksdb::(log::|WalManager|DBImpl::WriteToWAL|DBImpl::WriteWAL|DBImpl::ConcurrentWriteToWAL|"
          r"WriteBatchInternal::(Append|SetContents|ByteSize)|PosixWritableFile|WritableFileWriter|"
          r"DBImpl::SyncWAL|DBImpl::FlushWAL|crc32c)", ANY),
    (LSM, r"^rocksdb::(MemTable|InlineSkipList|SkipList|MemTableInserter|WriteBatchInternal::InsertInto|"
          r"FlushJob|Compaction|BuildTable|BlockBasedTableBuilder|BlockBuilder|MergeHelper|"
          r"DBImpl::(BackgroundFlush|BackgroundCompaction|FlushMemTable|SwitchMemtable|"
          r"ScheduleFlushes|MaybeScheduleFlushOrCompaction)|VersionSet|VersionBuilder|"
          r"ConcurrentArena|Arena|HashSkipList|PlainTableBuilder)", ANY),
    (BTREE, r"^rocksdb::(BlockBasedTable|Block::|BlockIter|DataBlockIter|IndexBlockIter|IndexReader|"
            r"FilterBlock|FullFilterBlock|BloomFilter|.*FilterBitsReader|DataBlockHashIndex|"
            r"MergingIterator|DBIter|ArenaWrappedDBIter|LevelIterator|Version::Get|TableCache)", ANY),
    (BUFFER, r"^rocksdb::(LRUCache|LRUHandle|ShardedCache|ClockCache|BlockFetcher|RandomAccessFileReader|"
             r"PosixRandomAccessFile|BlockCache|CacheAlloc|HyperClockCache)", ANY),
    (LOCKS, r"^(rocksdb::(port::Mutex|port::RWMutex|InstrumentedMutex|TransactionLockMgr|PointLockManager|"
            r"LockMap|SpinMutex|WriteThread::(AwaitState|JoinBatchGroup|LinkOne)))", ANY),
    (TRANSACTIONS, r"^(rocksdb::(PessimisticTransaction|TransactionBaseImpl|WriteCommittedTxn|"
                   r"TransactionDB|Snapshot|WriteBatchWithIndex|WBWIIterator|WriteBatchEntry)|"
                   r"myrocks::Rdb_transaction)", ANY),
    (TABLE, r"^myrocks::(Rdb_key_def|Rdb_converter|Rdb_string_writer|Rdb_string_reader|Rdb_field_packing|"
            r"Rdb_bit_writer|Rdb_pk_comparator|rdb_unpack|rdb_pack|ha_rocksdb::(convert_record|"
            r"update_write_pk|update_write_sk|update_write_indexes|get_pk_for_update))", ANY),
    (EXECUTOR, r"^myrocks::ha_rocksdb::", ANY),
    (LOCKS, r"^myrocks::.*(mutex|Mutex|lock)", ANY),
    (OTHER, r"^(rocksdb|myrocks)::", ANY),  # the rest of RocksDB and MyRocks: named in the functions table
)

SQLITE = (
    (WAL, r"^(sqlite3Wal|wal[A-Z]|pager_write$|pager_open_journal|pagerOpenWal|pager_end_transaction|"
          r"syncJournal|writeJournalHdr|pager_playback|subjournalPage|sqlite3JournalOpen|memjrnl)", ANY),
    (TRANSACTIONS, r"^(sqlite3VdbeHalt|sqlite3BtreeCommit|sqlite3BtreeBegin|vdbeCommit|sqlite3VdbeCheckFk|"
                   r"sqlite3BtreeSavepoint|sqlite3PagerCommit|sqlite3PagerBegin|sqlite3VdbeCloseStatement)", ANY),
    (LOCKS, r"^(sqlite3_mutex|sqlite3Mutex|pthreadMutex|unixLock|unixUnlock|posixUnlock|unixFileLock|"
            r"sqlite3OsLock|sqlite3OsUnlock|sqlite3BtreeEnter|sqlite3BtreeLeave|sqlite3VdbeEnter|"
            r"sqlite3VdbeLeave|querySharedCacheTableLock|setSharedCacheTableLock)", ANY),
    (BTREE, r"^(sqlite3Btree|btree|balance|insertCell|dropCell|moveTo|fillInCell|allocateSpace|"
            r"freeSpace|defragmentPage|accessPayload|getCellInfo|btreeParseCell|cellSize|"
            r"computeCellSize|allocateBtreePage|freePage|decodeFlags|zeroPage|getAndInitPage|"
            r"pageInsertArray|rebuildPage|editPage|copyNodeContent|sqlite3VdbeIdxKeyCompare|"
            r"sqlite3VdbeRecordCompare|vdbeRecordCompare|indexCellCompare|saveAllCursors|"
            r"saveCursorPosition|btreeMoveto|sqlite3BtreeTableMoveto|sqlite3BtreeIndexMoveto)", ANY),
    (BUFFER, r"^(sqlite3Pager|pager_|pagerAcquire|getPageNormal|getPageMMap|sqlite3Pcache|pcache|"
             r"pcache1|sqlite3PagerUnref|sqlite3OsRead|sqlite3OsWrite|unixRead|unixWrite|seekAndRead|"
             r"seekAndWrite|pagerWriteLargeSector|pager_write_pagelist)", ANY),
    (MEMORY, r"^(sqlite3Malloc|sqlite3_malloc|sqlite3DbMalloc|sqlite3DbRealloc|sqlite3DbFree|"
             r"sqlite3DbNNFree|sqlite3_free|sqlite3Realloc|sqlite3_realloc|sqlite3MemMalloc|sqlite3MemFree|"
             r"sqlite3MemSize|sqlite3MemRealloc|mallocWithAlarm|measureAllocationSize|sqlite3DbStrDup|"
             r"sqlite3DbStrNDup|sqlite3DbSpanDup|sqlite3StrAccum|sqlite3_str|sqlite3VdbeMemGrow|"
             r"sqlite3VdbeMemClearAndResize|sqlite3VdbeMemRelease|vdbeMemClear|sqlite3VdbeMemFinalize|"
             r"sqlite3DbMallocRawNN|lookaside|sqlite3LookasideUsed|sqlite3HeapNearlyFull)", ANY),
    (PARSER, r"^(sqlite3Parser|yy_|sqlite3RunParser|sqlite3GetToken|sqlite3Prepare|sqlite3LockAndPrepare|"
             r"sqlite3_prepare|sqlite3Select|sqlite3Where|where|sqlite3Expr|sqlite3Insert|sqlite3Update|"
             r"sqlite3DeleteFrom|sqlite3Locate|sqlite3FindTable|sqlite3Resolve|resolve|sqlite3Code|"
             r"sqlite3Src|sqlite3Id|sqlite3With|sqlite3Cte|sqlite3KeyInfo|sqlite3GetVdbe|sqlite3Finish|"
             r"sqlite3ExprList|sqlite3Init|sqlite3ReadSchema|sqlite3SchemaToIndex|sqlite3Token|"
             r"sqlite3Keyword|keywordCode|sqlite3FindFunction|sqlite3Authcheck|sqlite3AuthRead|"
             r"sqlite3TableLock|sqlite3BeginWriteOperation|sqlite3OpenTable|sqlite3Walk|walkExpr|"
             r"sqlite3StrICmp|sqlite3_stricmp|sqlite3Dequote|exprAnalyze|codeOffset|sqlite3VdbeAdd|"
             r"sqlite3VdbeChange|sqlite3VdbeMakeReady|sqlite3VdbeResolveLabel|sqlite3VdbeMakeLabel|"
             r"sqlite3VdbeGoto|sqlite3VdbeJumpHere|sqlite3VdbeEndCoroutine|sqlite3VdbeCurrentAddr|"
             r"sqlite3VdbeReusable|sqlite3VdbeDb|sqlite3VdbeSetColName|sqlite3VdbeExplain)", ANY),
    (EXECUTOR, r"^(sqlite3VdbeExec|sqlite3Vdbe|vdbe|sqlite3_step|sqlite3Step|sqlite3_column|columnMem|"
               r"sqlite3ValueText|sqlite3_value|sqlite3AtoF|sqlite3MemCompare|sqlite3_reset|"
               r"sqlite3_finalize|sqlite3_bind|sqlite3VarintLen|sqlite3GetVarint|sqlite3PutVarint|"
               r"sqlite3_data_count|sqlite3_changes|sqlite3_total_changes|sqlite3_last_insert_rowid|"
               r"sqlite3RecordCompare|serialGet|sqlite3IntFloatCompare|sqlite3VdbeSerial)", ANY),
    (CRYPTO, r"^(sqlite3_randomness|sqlite3PrngSaveState|randomFunc|chacha)", ANY),
)

DUCKDB = (
    (WAL, r"^duckdb::(WriteAheadLog|WAL|ReplayState|WriteAheadLogDeserializer|BufferedFileWriter|"
          r"WALWriteState|ChecksumWriter)", ANY),
    (BTREE, r"^duckdb::(ART|Node|Leaf|Prefix|ARTKey|Node4|Node16|Node48|Node256|Iterator::|BoundIndex|"
            r"Index::|TableIndexList|ARTOperator|FixedSizeAllocator|FixedSizeBuffer|IndexStorageInfo)", ANY),
    (TABLE, r"^duckdb::(RowGroup|ColumnData|ColumnSegment|StandardColumnData|ValidityColumnData|"
            r"DataTable|LocalStorage|LocalTableStorage|RowGroupCollection|UncompressedFunctions|"
            r".*Compression|.*Compress|.*Storage::|CollectionScanState|TableScanState|ColumnScanState|"
            r"SegmentTree|SegmentBase|StructColumnData|ListColumnData|RowVersionManager|"
            r"ChunkVectorInfo|ChunkConstantInfo|ValidityMask|TemplatedValidity|FixedSizeAppend|"
            r"NumericStats|BaseStatistics|SegmentStatistics|TableStatistics|ColumnStatistics)", ANY),
    (BUFFER, r"^duckdb::(BufferManager|StandardBufferManager|BlockManager|SingleFileBlockManager|"
             r"BufferHandle|FileBuffer|BlockHandle|BufferPool|MetadataManager|MetadataWriter|"
             r"MetadataReader|PartialBlock|FileSystem|LocalFileSystem|FileHandle|UnixFileHandle|"
             r"BufferEvictionNode|TemporaryMemoryManager|BufferPoolReservation)", ANY),
    (LOCKS, r"^(duckdb::(.*Lock|.*lock|StorageLock|mutex)|std::mutex|std::unique_lock|std::lock_guard|"
            r"std::condition_variable|duckdb_moodycamel|duckdb::TaskScheduler|duckdb::Semaphore)", ANY),
    (TRANSACTIONS, r"^duckdb::(Transaction|DuckTransaction|MetaTransaction|TransactionManager|"
                   r"DuckTransactionManager|UndoBuffer|CommitState|CleanupState|RollbackState|"
                   r"UpdateSegment|UpdateInfo|DeleteInfo|AppendInfo|TransactionContext|"
                   r"ClientContext::(BeginTransaction|Commit)|TransactionData)", ANY),
    (PARSER, r"^(duckdb::(Parser|PostgresParser|Transformer|Binder|.*Binder::|ExpressionBinder|Planner|"
             r"Optimizer|LogicalOperator|Logical[A-Z]|PhysicalPlanGenerator|ColumnBinding|"
             r"ClientContext::(Prepare|CreatePreparedStatement|PendingStatementOrPreparedStatement|"
             r"ParseStatements)|Catalog|DuckCatalog|CatalogSet|CatalogEntry|SchemaCatalogEntry|"
             r"DuckSchemaEntry|TableCatalogEntry|DuckTableEntry|.*Rewriter|FilterPushdown|"
             r"ExpressionRewriter|StatisticsPropagator|ColumnLifetimeAnalyzer|RemoveUnusedColumns|"
             r"Keyword|KeywordHelper|.*Statement::|.*Ref::|ParsedExpression|.*Expression::Copy|"
             r"BoundStatement|PreparedStatementData|QueryNode|SelectNode|TableRef)|"
             r"duckdb_libpgquery|base_yy|core_yy|duckdb_yy)", ANY),
    (EXECUTOR, r"^duckdb::(Physical|Pipeline|Executor|Vector|DataChunk|ExpressionExecutor|"
               r"ExpressionState|ColumnDataCollection|ColumnDataAppend|TupleData|Sink|Source|"
               r"Operator|.*Operator|.*Function::|ScalarFunction|AggregateFunction|UnaryExecutor|"
               r"BinaryExecutor|TernaryExecutor|VectorOperations|ConstantVector|FlatVector|"
               r"StringVector|Value::|Value|hugeint|Hugeint|uhugeint|TryCast|Cast|NumericCast|"
               r"ExecuteFunction|RowOperations|PartitionedTupleData|ClientContext::(Execute|Fetch)|"
               r"QueryResult|MaterializedQueryResult|StreamQueryResult|PendingQueryResult|"
               r"DuckDBPyConnection|DuckDBPyRelation|DuckDBPyResult|NumpyResultConversion|"
               r"ArrowConverter|PythonObject|Event|.*Event::|Task|.*Task::|ExecutorTask)", ANY),
    (MEMORY, r"^duckdb::(Allocator|Arena|ArenaAllocator|ArenaChunk|.*Allocate|.*Allocator::|"
             r"make_uniq|make_shared|unique_ptr|shared_ptr|vector<)", ANY),
    (OTHER, r"^duckdb", ANY),  # the rest of DuckDB (its scheduler, settings...): named in the functions table
    (OTHER, ANY, r"^_?duckdb\."),  # a function its library does not name: DuckDB's, not the interpreter's
)

FAMILIES = {"postgres": POSTGRES, "mysql": MYSQL, "mariadb-myrocks": MYROCKS + MYSQL, "sqlite": SQLITE,
            "duckdb": DUCKDB}

# Rules every engine's process shares, after the engine's own.
COMMON = (
    (MEMORY, r"^(malloc|free|calloc|realloc|_int_malloc|_int_free|_int_realloc|malloc_consolidate|"
             r"__libc_malloc|__libc_free|__libc_calloc|__libc_realloc|tcache|unlink_chunk|sysmalloc|"
             r"posix_memalign|_mid_memalign|aligned_alloc|memalign|_int_memalign|cfree|"
             r"je_|jemalloc|tc_|tcmalloc|operator new|operator delete|__libc_memalign)", ANY),
    (CRYPTO, ANY, r"^(libcrypto|libssl|libgcrypt|libnettle)"),
    (CRYPTO, r"^(getrandom|getentropy|arc4random|random_r|__random|rand_r)", ANY),
    (LOCKS, r"^(pthread_mutex|pthread_rwlock|pthread_spin|pthread_cond|__pthread_mutex|__pthread_rwlock|"
            r"__lll_lock|__lll_unlock|lll_|futex|__futex|___pthread_mutex|___pthread_cond|"
            r"__pthread_cond|sem_wait|sem_post|__new_sem)", ANY),
    (NETWORK, r"^(send|recv|sendto|recvfrom|sendmsg|recvmsg|__libc_send|__libc_recv|poll|ppoll|__poll|"
              r"epoll_wait|epoll_ctl|select|__select|accept|accept4|__libc_sendto|__libc_recvfrom)$", ANY),
    (PYTHON, r"^pybind11::", ANY),
    (PYTHON, ANY, r"^(libpython|python[0-9.]*$|.*\.cpython-)"),
    (PYTHON, r"^(_?Py|_PyEval|PyObject|_PyObject)", ANY),
    (LIBC, ANY, r"^(libc\.so|libc-|ld-linux|libm\.so|libpthread|libdl|libstdc\+\+|libgcc_s)"),
)


def _compile(rules):
    return tuple((name, re.compile(function) if function else None, re.compile(obj) if obj else None)
                 for name, function, obj in rules)


@lru_cache(maxsize=None)
def rules_for(engine: str) -> tuple:
    """The engine's compiled rules (its own, then the shared ones), looked up by key, name,
    variant and family; an engine with no map of its own gets the shared rules alone."""
    return _compile(tuple(_own_rules(engine) or ()) + COMMON)


def _own_rules(engine: str):
    from ..engines import find_engine

    found = find_engine(engine)
    # An engine this benchlib does not declare (a stored run's, a version since dropped): by its name.
    return found.lookup(FAMILIES) if found is not None else FAMILIES.get(engine.partition("@")[0])


def has_map(engine: str) -> bool:
    """Whether the engine has rules of its own (else only the shared ones apply)."""
    return _own_rules(engine) is not None


def classify(function: str, obj: str, engine: str) -> str:
    for name, fn_re, obj_re in rules_for(engine):
        if (fn_re is None or fn_re.search(function)) and (obj_re is None or obj_re.search(obj or "")):
            return name
    return OTHER


def classify_frame(df: pd.DataFrame, engine: str) -> pd.DataFrame:
    """`df` (columns function, object) with a `subsystem` column added."""
    cache: dict[tuple[str, str], str] = {}

    def one(function: str, obj: str) -> str:
        key = (function, obj)
        if key not in cache:
            cache[key] = classify(function, obj, engine)
        return cache[key]

    return df.assign(subsystem=[one(f, o) for f, o in zip(df["function"], df["object"].fillna(""))])


def subsystem_names(engine: str) -> list[str]:
    """Every subsystem, in drawing order (the same list for every engine, so stacks compare)."""
    return list(SUBSYSTEMS)
