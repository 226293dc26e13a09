# Makefile for perc: make; make check; make install [PREFIX=...] [DESTDIR=...]
VERSION    = 0.1.0
SOMAJOR    = 0
PREFIX     = /usr/local
BINDIR     = $(PREFIX)/bin
LIBDIR     = $(PREFIX)/lib
INCLUDEDIR = $(PREFIX)/include
MANDIR     = $(PREFIX)/share/man
PCDIR      = $(LIBDIR)/pkgconfig
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions

CC      = cc
CXX     = c++
CFLAGS  = -O2 -g
LDLIBS  = -lleveldb -lhiredis -lpthread
# perc is linked statically: loading libleveldb and libstdc++ as shared
# libraries cost each command about 0.8 ms, more than the work itself.
# (Sanitizer builds cannot be static; check-asan links dynamically.)
STATIC_LIBS = -static -lleveldb -lhiredis \
	-lsnappy -lpthread
INSTALL = install
INSTALL_PROGRAM = $(INSTALL) -m 755
BATS    = bats
MANDOC  = mandoc
PERC_CFLAGS = -std=c11 -D_GNU_SOURCE -fPIC -Wall -Wextra -Werror \
	-Ilib -Icmd -DPERC_MANDIR='"$(MANDIR)"'

COMMANDS = abort begin commit del gc get help init load log notify resolve-locks \
	run-observer scan scan-notify serve set shell show status ts wait
# The core in lib/, each store in a folder of its own (README, Layout).
LIBOBJ = lib/autocommit.o lib/backend.o lib/batch.o lib/buf.o \
	lib/cell.o lib/clock.o lib/codec.o lib/collect.o lib/commit.o \
	lib/coprocess.o lib/config.o lib/db.o lib/disk.o lib/error.o \
	lib/escape.o lib/failpoint.o lib/gc.o lib/init.o lib/inspect.o \
	lib/journal.o lib/load.o lib/lock.o lib/log.o lib/notify.o \
	lib/observe.o lib/owner.o lib/request.o lib/runners.o lib/scan.o \
	lib/seen.o lib/serve.o \
	lib/status.o lib/store.o lib/store_server.o lib/txn.o lib/wait.o lib/wake.o lib/weak.o \
	lib/weak_run.o lib/writeset.o \
	$(LEVELDB_OBJ) $(REDIS_OBJ) $(SERVER_OBJ)
# The LevelDB store's server (perc serve) and the store through it.
SERVER_OBJ = lib/server/client.o lib/server/dispatch.o lib/server/place.o \
	lib/server/server.o lib/server/spawn.o lib/server/verbs.o \
	lib/server/wire.o
LEVELDB_OBJ = lib/leveldb/clean.o lib/leveldb/dirwake.o \
	lib/leveldb/durable_env.o \
	lib/leveldb/gc.o lib/leveldb/head.o lib/leveldb/hold.o lib/leveldb/io.o lib/leveldb/kv.o \
	lib/leveldb/log.o lib/leveldb/log_entry.o lib/leveldb/mvcc.o lib/leveldb/oracle.o lib/leveldb/read.o \
	lib/leveldb/readonly_env.o lib/leveldb/settle.o lib/leveldb/store.o \
	lib/leveldb/walk.o lib/leveldb/weak.o
REDIS_OBJ = lib/redis/cluster.o lib/redis/gc.o lib/redis/log.o lib/redis/mvcc.o \
	lib/redis/notify.o lib/redis/oracle.o lib/redis/pipeline.o lib/redis/scripts.o \
	lib/redis/store.o lib/redis/subscribe.o lib/redis/url.o \
	lib/redis/wake.o lib/redis/walk.o lib/redis/weak.o
CMDOBJ = cmd/perc.o cmd/util.o cmd/out.o cmd/abort.o cmd/begin.o cmd/commit.o \
	cmd/del.o cmd/gc.o cmd/get.o cmd/help.o cmd/init.o cmd/log.o cmd/notify.o \
	cmd/resolve-locks.o \
	cmd/run-observer.o cmd/scan.o cmd/scan-notify.o cmd/serve.o cmd/set.o cmd/shell.o cmd/show.o \
	cmd/status.o cmd/ts.o cmd/load.o cmd/wait.o cmd/repl.o
# The shell for people edits its lines with libedit (BSD-licensed, as
# sqlite3 can use), which needs the terminal's and libbsd's libraries.
EDIT_LIBS = -ledit -ltinfo -lbsd -lmd
TESTOBJ = tests/unit/unit.o tests/unit/test_codec.o \
	tests/unit/test_durable_env.o tests/unit/test_gc.o \
	tests/unit/test_journal.o tests/unit/test_oracle.o \
	tests/unit/test_redis_cluster.o tests/unit/test_store_redis.o \
	tests/unit/test_store_leveldb.o
SONAME = libperc.so.$(SOMAJOR)

all: perc links libperc.a libperc.so.$(VERSION) perc.pc

.SUFFIXES: .c .cc .o
.c.o:
	$(CC) $(PERC_CFLAGS) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<
.cc.o:
	$(CXX) -std=c++17 -fPIC -Wall -Wextra -Werror -Ilib $(CPPFLAGS) \
	    $(CFLAGS) -c -o $@ $<

$(LIBOBJ) $(CMDOBJ) $(TESTOBJ): lib/perc.h $(wildcard lib/*.h lib/*/*.h)

# The Redis store's Lua scripts, lib/redis/lua/NAME.lua: the one list of
# them.  make turns each into a C string redis_lua_NAME (scripts.c) and
# names the scripts run by EVALSHA in scripts.def, one SCRIPT(NAME, name)
# line each, from which redis.h makes enum rs_script and store.c the
# table it registers.  common is prepended to each of those; oracle is a
# function library of its own (oracle.c).  sed only, so the build needs
# nothing CI does not have.
REDIS_SCRIPTS = read find_commit prewrite commit rollback put range \
	raise keep push scan weak_settle weak_clear log_read drop
REDIS_LUA = $(patsubst %,lib/redis/lua/%.lua,common oracle $(REDIS_SCRIPTS))
lib/redis/scripts.c: $(REDIS_LUA) Makefile
	{ printf '/* Made by make from lib/redis/lua/NAME.lua: do not edit. */\n'; \
	  printf '#include "scripts.h"\n'; \
	  for f in $(REDIS_LUA); do \
	    n=$$(basename $$f .lua); \
	    printf '\nconst char redis_lua_%s[] =\n' "$$n"; \
	    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' \
	        -e 's/$$/\\n"/' $$f; \
	    printf '\t;\n'; \
	  done; } > $@.tmp && mv $@.tmp $@
lib/redis/scripts.def: Makefile
	{ printf '/* Made by make from REDIS_SCRIPTS: do not edit. */\n'; \
	  for n in $(REDIS_SCRIPTS); do echo "$$n"; done | \
	  sed -e 'h' -e 'y/abcdefghijklmnopqrstuvwxyz/ABCDEFGHIJKLMNOPQRSTUVWXYZ/' \
	      -e 'G' -e 's/^\(.*\)\n\(.*\)$$/SCRIPT(\1, \2)/'; } > $@.tmp && \
	mv $@.tmp $@
$(REDIS_OBJ): lib/redis/scripts.def
$(CMDOBJ): cmd/cmd.h

# Made anew: the two stores' objects share names (store.o, gc.o...),
# which ar's replace-by-name would mix up in an old archive.
libperc.a: $(LIBOBJ)
	rm -f $@
	$(AR) rcs $@ $(LIBOBJ)
libperc.so.$(VERSION): $(LIBOBJ) lib/perc.map
	$(CXX) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=lib/perc.map \
	    $(LDFLAGS) $(CFLAGS) -o $@ $(LIBOBJ) $(LDLIBS)
perc: $(CMDOBJ) libperc.a
	$(CXX) $(LDFLAGS) $(CFLAGS) -o $@ $(CMDOBJ) libperc.a $(EDIT_LIBS) \
	    $(STATIC_LIBS)
links: perc
	for c in $(COMMANDS); do ln -sf perc perc-$$c; done
# Made again on every run: PREFIX may differ between make and make install.
perc.pc: perc.pc.in FORCE
	sed -e 's|@prefix@|$(PREFIX)|' -e 's|@libdir@|$(LIBDIR)|' \
	    -e 's|@includedir@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    perc.pc.in > $@
FORCE:
# The build as git describe names it, for perc --version; rewritten
# only when it changes, so that a tree built again rebuilds nothing.
cmd/describe.h: FORCE
	@d=$$(git describe --always --dirty 2> /dev/null || echo unknown); \
	line="#define PERC_DESCRIBE \"$$d\""; \
	[ "$$(cat $@ 2> /dev/null)" = "$$line" ] || echo "$$line" > $@
cmd/perc.o: cmd/describe.h
tests/unit/unit: $(TESTOBJ) libperc.a
	$(CXX) $(LDFLAGS) $(CFLAGS) -o $@ $(TESTOBJ) libperc.a $(STATIC_LIBS)

# The whole suite: C unit tests, then bats on the LevelDB store, through
# its store server (the default), then again with each process opening
# the store itself (PERC_SERVE=0: DIRECT_BATS, every file that uses the
# LevelDB store but the server's own), then bats again on the Redis
# store; the last line sums them all.  One
# loopback cluster (tests/cluster) serves the unit tests of the Redis
# client and store and the second pass, each test on a table of its
# own; tests that start clusters of their own (cluster.bats,
# redis.bats) and that make no data directory with perc_fresh_dir run
# once.  That cluster lives in /dev/shm where there is one: its fsyncs
# cost nothing there, and what it holds is the tests' scratch (the
# tests of the cluster's own durability, in redis.bats, start clusters
# on disk).  The bats files run in CHECK_JOBS shards at once
# (tests/bats-shards), one pass after the other: side by side, the
# Redis pass, which keeps a core busy with its scripts and its 400,000-
# cell loads (measured alone: 250 s of CPU in 380 s), left the tests of
# the LevelDB pass that bound a wait (load.bats) a machine of four
# processes for two cores, and they failed in one CI run in two.  For
# the same reason the fault suite (tests/faults.bats), whose workloads
# keep both cores busy, runs last and alone.
CHECK_JOBS = 2
FAULT_BATS = tests/faults.bats
CHECK_BATS = $(filter-out $(FAULT_BATS),$(wildcard tests/*.bats))
REDIS_BATS = $(filter-out tests/cluster.bats tests/redis.bats, \
	$(shell grep -l perc_fresh_dir tests/*.bats))
DIRECT_BATS = $(filter-out tests/serve.bats, $(REDIS_BATS))
check test: check-layers check-scripts all tests/unit/unit
	grep -q 'PERC_VERSION "$(VERSION)"' lib/perc.h
	printf '#include "perc.h"\n' | \
	    $(CC) -std=c99 -pedantic -Werror -Ilib -fsyntax-only -x c -
	$(MANDOC) -T lint -W warning man/*.1
	@cdir=$$(mktemp -d /dev/shm/perc-check-cluster.XXXXXX 2> /dev/null || \
	    mktemp -d /tmp/perc-check-cluster.XXXXXX); \
	url=$$(tests/cluster start "$$cdir/c" 2> tests/cluster.err) || url=; \
	PERC_TEST_REDIS_URL=$$url tests/unit/unit > tests/unit.tap; urc=$$?; \
	cat tests/unit.tap; \
	export PERC_BUILD="$$PWD" PERC_TEST_CC='$(CC)' \
	    PERC_TEST_CFLAGS='$(CFLAGS)' BATS='$(BATS)' \
	    BATS_FLAGS='$(BATS_FLAGS)'; \
	tests/bats-shards $(CHECK_JOBS) $(CHECK_BATS) > tests/bats.tap; \
	brc=$$?; \
	cat tests/bats.tap; \
	PERC_TEST_SERVE=0 tests/bats-shards $(CHECK_JOBS) $(DIRECT_BATS) \
	    > tests/bats-direct.raw; drc=$$?; \
	sed -e 's/^ok [0-9]* /&[direct] /' \
	    -e 's/^not ok [0-9]* /&[direct] /' tests/bats-direct.raw \
	    > tests/bats-direct.tap; \
	cat tests/bats-direct.tap; \
	if [ -n "$$url" ]; then \
	    PERC_TEST_STORE=redis PERC_TEST_REDIS_URL=$$url \
	      tests/bats-shards $(CHECK_JOBS) $(REDIS_BATS) \
	      > tests/bats-redis.raw; rrc=$$?; \
	    sed -e 's/^ok [0-9]* /&[redis] /' \
	        -e 's/^not ok [0-9]* /&[redis] /' tests/bats-redis.raw \
	        > tests/bats-redis.tap; \
	else \
	    echo "not ok 1 [redis] the loopback cluster did not start:" \
	        "see tests/cluster.err" > tests/bats-redis.tap; rrc=1; \
	fi; \
	cat tests/bats-redis.tap; \
	tests/cluster stop "$$cdir/c" > /dev/null 2>&1; rm -rf "$$cdir"; \
	tests/bats-shards 1 $(FAULT_BATS) > tests/bats-faults.tap; frc=$$?; \
	cat tests/bats-faults.tap; \
	cat tests/unit.tap tests/bats.tap tests/bats-direct.tap \
	    tests/bats-redis.tap tests/bats-faults.tap | awk \
	    '/^ok .*# skip/ { s++; next } /^ok/ { p++ } /^not ok/ { f++ } \
	    END { printf "%d passed, %d failed, %d skipped\n", p, f, s }'; \
	[ $$urc -eq 0 ] && [ $$brc -eq 0 ] && [ $$drc -eq 0 ] && \
	    [ $$rrc -eq 0 ] && [ $$frc -eq 0 ]

# The layers (README, Layout): a store includes nothing of the core above
# the seam, the core no store's header, and no files call each other in
# a circle (read from the objects).  First, since it costs nothing.
check-layers: $(LIBOBJ)
	tests/layers

# Every key a Redis script touches is one it was given in KEYS, which
# Redis Cluster wants and the server cannot check for keys of one slot.
check-scripts:
	tests/script-keys $(filter-out lib/redis/lua/oracle.lua,$(REDIS_LUA))

# The same suite built with AddressSanitizer and UBSan, in its own tree.
# (Not UBSan's vptr check: it needs the C++ runtime, which a C program
# linking libperc.so, such as examples/hello.c, does not bring.)
# Every report (ASan, LeakSanitizer, UBSan) also goes to its own file in
# build-asan/san, so that an error counts even in a test that ignores
# how perc exited; any report fails it.  Not a file that holds only
# LeakSanitizer's "Unable to get registers from thread": its leak check
# could not stop a process that a test was stopping or killing at exit,
# which says nothing about memory.  The last line says
# "asan: N passed, N failed, N skipped; N sanitizer reports".
# To stay within CI's budget it runs a sample of the bats files (the
# unit tests, of both stores, run in full).  Each file has a store to
# run on under ASan, the files that run on both stores taking turns
# between them; and each run takes every third file of those lists,
# which third by the number of commits modulo 3, so three commits in a
# row cover every file (a half each run took up to 750 s of CI's 1800).
# (Not cluster.bats, which runs no perc, nor the fault suite, whose
# workloads and timeouts want perc at full speed.)  ASAN_PART=0, 1 or 2 picks a
# third by hand.
ASAN_PART = $(shell echo $$(( $$(git rev-list --count HEAD 2> /dev/null || \
	echo 0) % 3 )))
asan_pick = $(shell echo $(1) | tr ' ' '\n' | awk -v h=$(ASAN_PART) \
	'NF && NR % 3 == h')
ASAN_REDIS_ALL = $(shell echo $(REDIS_BATS) | tr ' ' '\n' | awk 'NR % 2')
ASAN_LEVELDB_ALL = $(filter-out $(ASAN_REDIS_ALL) tests/cluster.bats, \
	$(CHECK_BATS))
ASAN_REDIS_BATS = $(call asan_pick,$(ASAN_REDIS_ALL))
ASAN_LEVELDB_BATS = $(call asan_pick,$(ASAN_LEVELDB_ALL))
check-asan:
	rm -rf build-asan && mkdir build-asan
	git ls-files | tar -cf - -T - | tar -xf - -C build-asan
	mkdir build-asan/san
	ASAN_OPTIONS="log_path=$$PWD/build-asan/san/asan:$${ASAN_OPTIONS:-}" \
	UBSAN_OPTIONS="log_path=$$PWD/build-asan/san/ubsan:print_stacktrace=1:$${UBSAN_OPTIONS:-}" \
	$(MAKE) -C build-asan check CC=clang CXX=clang++ \
	    CHECK_BATS='$(ASAN_LEVELDB_BATS)' REDIS_BATS='$(ASAN_REDIS_BATS)' \
	    FAULT_BATS= DIRECT_BATS= \
	    STATIC_LIBS='-lleveldb -lhiredis -lpthread' \
	    CFLAGS='-O1 -g -fsanitize=address,undefined -fno-sanitize=vptr,function -fno-omit-frame-pointer -fno-sanitize-recover=all'; \
	rc=$$?; \
	reports=$$(find build-asan/san -type f -exec grep -l -v -x -E \
	    '==[0-9]+==Unable to get registers from thread [0-9]+\.' {} + | \
	    wc -l); \
	find build-asan/san -type f -exec cat {} +; \
	cat build-asan/tests/unit.tap build-asan/tests/bats.tap \
	    build-asan/tests/bats-redis.tap 2> /dev/null | \
	awk -v reports="$$reports" '/^ok .*# skip/ { s++; next } /^ok/ { p++ } \
	    /^not ok/ { f++ } END { printf "asan: %d passed, %d failed, " \
	    "%d skipped; %d sanitizer reports\n", p, f, s, reports }'; \
	[ $$rc -eq 0 ] && [ $$reports -eq 0 ]

# libFuzzer targets for every decoder of bytes from disk or a user, built
# with clang, ASan and UBSan in their own tree; each runs FUZZ_SECONDS
# from its seed corpus in tests/fuzz/corpus.  A crash input belongs in
# that corpus, where every later run replays it first.  The last line
# says "fuzz: N passed, 0 failed; N crashes", a target a pass.
FUZZ_SECONDS = 30
FUZZERS = key records journal escape files cli request
FUZZ_FLAGS = -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all
fuzz: cmd/describe.h
	rm -rf build-fuzz && mkdir build-fuzz
	git ls-files | tar -cf - -T - | tar -xf - -C build-fuzz
	$(MAKE) -C build-fuzz libperc.a CC=clang CXX=clang++ \
	    CFLAGS='$(FUZZ_FLAGS) -fsanitize=fuzzer-no-link'
	for f in $(FUZZERS); do \
	    clang++ -x c -std=c11 -D_GNU_SOURCE -Ilib -Icmd $(FUZZ_FLAGS) \
	        -fsanitize=fuzzer tests/fuzz/fuzz_$$f.c \
	        $$([ $$f = cli ] && echo $(CMDOBJ:%.o=%.c) -Dmain=perc_main) \
	        -x none build-fuzz/libperc.a -lleveldb -lhiredis -lpthread \
	        $$([ $$f = cli ] && echo $(EDIT_LIBS)) \
	        -o build-fuzz/fuzz_$$f || exit 1; \
	done
	n=0; for f in $(FUZZERS); do \
	    mkdir -p build-fuzz/corpus-$$f && \
	    cp tests/fuzz/corpus/$$f/* build-fuzz/corpus-$$f/ && \
	    echo "fuzz_$$f: $(FUZZ_SECONDS) s" && \
	    build-fuzz/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) \
	        -artifact_prefix=build-fuzz/crash-$$f- \
	        build-fuzz/corpus-$$f > build-fuzz/fuzz_$$f.log 2>&1; \
	    grep -E '^Done [0-9]+ runs' build-fuzz/fuzz_$$f.log; \
	    if ls build-fuzz/crash-$$f-* >/dev/null 2>&1; then \
	        sed -n '/ERROR/,$$p' build-fuzz/fuzz_$$f.log; \
	        echo "fuzz: $$n passed, 0 failed; 1 crashes (fuzz_$$f)"; exit 1; fi; \
	    echo "fuzz_$$f: corpus $$(ls build-fuzz/corpus-$$f | wc -l) inputs"; \
	    n=$$((n + 1)); \
	done; \
	echo "fuzz: $$n passed, 0 failed; 0 crashes"

# The bats suite (or the files in VALGRIND_TESTS) with every perc run
# under valgrind's memcheck, built dynamically (memcheck cannot watch the
# allocator of a static binary); any error or definite leak fails it.
# Each run's report goes to its own file in build-valgrind/logs, so an
# error counts even in a test that ignores how perc exited: any report
# whose ERROR SUMMARY is not 0.  (LevelDB's background thread, never
# joined, leaves "possibly lost" blocks: only definite leaks count.)
# The files run in VALGRIND_JOBS shards at once (tests/bats-shards).
# Every perc run goes under memcheck, or with VALGRIND_EVERY=N about
# one in N: the full pass takes about 50 minutes per store on two
# cores, so it is run by hand (.ci/run's optional valgrind stage takes
# one run in 40).  tests/valgrind.supp holds what is not ours.
VALGRIND_TESTS = $(CHECK_BATS)
VALGRIND_JOBS = 2
VALGRIND_EVERY = 1
VALGRIND = valgrind --error-exitcode=99 --leak-check=full \
	--show-leak-kinds=definite --errors-for-leak-kinds=definite \
	--suppressions=$(CURDIR)/tests/valgrind.supp
check-valgrind:
	rm -rf build-valgrind && mkdir build-valgrind
	git ls-files | tar -cf - -T - | tar -xf - -C build-valgrind
	$(MAKE) -C build-valgrind all tests/unit/unit \
	    STATIC_LIBS='-lleveldb -lhiredis -lpthread' CFLAGS='-O1 -g'
	mkdir build-valgrind/vg build-valgrind/logs
	sed -e "s|@BUILD@|$$PWD/build-valgrind|g" -e 's|@VALGRIND@|$(VALGRIND)|' \
	    -e 's|@EVERY@|$(VALGRIND_EVERY)|' tests/valgrind-perc.in \
	    > build-valgrind/vg/perc
	chmod +x build-valgrind/vg/perc
	for c in $(COMMANDS); do ln -s perc build-valgrind/vg/perc-$$c; done
	$(VALGRIND) -q build-valgrind/tests/unit/unit > build-valgrind/unit.tap
	PERC_BUILD="$$PWD/build-valgrind/vg" PERC_TEST_LOCK_TIMEOUT=20 \
	    PERC_TEST_VALGRIND=1 BATS_FILE_TIMEOUT=7200 BATS='$(BATS)' \
	    tests/bats-shards $(VALGRIND_JOBS) $(VALGRIND_TESTS) | tee build-valgrind/bats.tap | grep -v '^ok'; \
	bad=$$(find build-valgrind/logs -name '*.log' -exec \
	    grep -L 'ERROR SUMMARY: 0 errors' {} + | xargs -r grep -l \
	    'ERROR SUMMARY'); \
	[ -z "$$bad" ] || cat $$bad; \
	errors=$$(printf '%s' "$$bad" | grep -c .); \
	runs=$$(find build-valgrind/logs -name '*.log' | wc -l); \
	awk -v errors="$$errors" -v runs="$$runs" '/^ok .*# skip/ { s++; next } /^ok/ { p++ } \
	    /^not ok/ { f++ } END { printf "valgrind: %d passed, %d failed, " \
	    "%d skipped; %d runs under memcheck, %d with errors\n", p, f, s, \
	    runs, errors; \
	    exit f + errors > 0 }' \
	    build-valgrind/unit.tap build-valgrind/bats.tap

# A long chaos run: workers transfer money while others are killed and
# commits stop at every failpoint; then every invariant is checked.
CHAOS_SECONDS = 300
CHAOS_WORKERS = 6
chaos: all
	d=$$(mktemp -d) && PERC_BUILD="$$PWD" tests/chaos.sh "$$d/db" \
	    $(CHAOS_SECONDS) $(CHAOS_WORKERS); rc=$$?; \
	if [ $$rc -eq 0 ]; then rm -rf "$$d"; \
	else echo "chaos failed; its logs are in $$d/db.chaos"; fi; exit $$rc

# A long run of the fault suite: perc on a loopback Redis Cluster whose
# masters are cut off by nftables, paused and killed, one fault at a
# time (tests/faults.sh; root and nftables).  make check runs 40 s of it
# (tests/faults.bats).
FAULTS_SECONDS = 300
faults: all
	d=$$(mktemp -d) && PERC_BUILD="$$PWD" tests/faults.sh "$$d/f" \
	    $(FAULTS_SECONDS); rc=$$?; \
	if [ $$rc -eq 0 ]; then rm -rf "$$d"; \
	else echo "the fault suite failed; its logs are in $$d/f"; fi; exit $$rc

# By hand (not in make check): power cuts under load on crashfs, a FUSE
# file system kept outside this tree: CRASHFS=PATH to its binary.
# Every store and mode, CRASHFS_CYCLES cycles each (tests/crashfs-cycles).
CRASHFS_CYCLES = 20
CRASHFS_STORES = leveldb redis
CRASHFS_MODES = default partial dirops
crashfs-cycles: all
	@[ -n "$(CRASHFS)" ] || { echo "say where crashfs is: make crashfs-cycles CRASHFS=PATH"; exit 2; }
	rc=0; for s in $(CRASHFS_STORES); do for m in $(CRASHFS_MODES); do \
	    CRASHFS="$(CRASHFS)" tests/crashfs-cycles $$s $$m \
	    $(CRASHFS_CYCLES) || rc=1; done; done; exit $$rc

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
	    $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(PCDIR) \
	    $(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL_PROGRAM) perc $(DESTDIR)$(BINDIR)
	for c in $(COMMANDS); do ln -sf perc $(DESTDIR)$(BINDIR)/perc-$$c; done
	$(INSTALL) -m 644 libperc.a $(DESTDIR)$(LIBDIR)
	$(INSTALL_PROGRAM) libperc.so.$(VERSION) $(DESTDIR)$(LIBDIR)
	ln -sf libperc.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libperc.so
	$(INSTALL) -m 644 lib/perc.h $(DESTDIR)$(INCLUDEDIR)
	$(INSTALL) -m 644 man/*.1 $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 644 perc.pc $(DESTDIR)$(PCDIR)
	$(INSTALL) -m 644 cmd/perc.bash-completion $(DESTDIR)$(BASHCOMPDIR)/perc

install-strip:
	$(MAKE) INSTALL_PROGRAM='$(INSTALL) -m 755 -s' install

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/perc $(DESTDIR)$(BINDIR)/perc-*
	rm -f $(DESTDIR)$(LIBDIR)/libperc.* $(DESTDIR)$(INCLUDEDIR)/perc.h
	rm -f $(DESTDIR)$(MANDIR)/man1/perc.1 $(DESTDIR)$(MANDIR)/man1/perc-*.1
	rm -f $(DESTDIR)$(PCDIR)/perc.pc $(DESTDIR)$(BASHCOMPDIR)/perc

tests/bench/bench: tests/bench/bench.c tests/bench/common.h libperc.a
	$(CXX) -x c -std=c11 $(PERC_CFLAGS) $(CFLAGS) -x none $(LDFLAGS) -o $@ \
	    tests/bench/bench.c libperc.a $(STATIC_LIBS)
tests/bench/rbench: tests/bench/rbench.c tests/bench/common.h libperc.a
	$(CXX) -x c -std=c11 $(PERC_CFLAGS) $(CFLAGS) -x none $(LDFLAGS) -o $@ \
	    tests/bench/rbench.c libperc.a $(STATIC_LIBS)

# Benchmarks: figures and ratios, never pass or fail.  BENCH_SCALE=0.1
# shrinks every count for a quick look.  The Redis store's figures run
# on a loopback cluster of their own (tests/cluster), when redis-server
# is installed; BENCH_REDIS_SCALE scales that part alone.
bench: all tests/bench/bench tests/bench/rbench
	tests/bench/run.sh

demo: all
	rm -rf demo.db
	PATH="$$PWD:$$PATH" sh examples/demo.sh demo.db

# A Redis Cluster on loopback (tests/cluster): 3 masters, 3 replicas.
CLUSTER_DIR = cluster
cluster:
	@url=$$(tests/cluster start $(CLUSTER_DIR)) && echo "$$url" && \
	echo "use it: perc init --store $$url DIR; stop it: make cluster-stop"
cluster-stop:
	tests/cluster stop $(CLUSTER_DIR)

format:
	clang-format -i cmd/*.c cmd/*.h lib/*.c lib/*.h tests/unit/*.c

clean distclean:
	rm -f perc perc-* libperc.* perc.pc tests/*.tap tests/bats-redis.raw tests/bats-direct.raw tests/cluster.err $(LIBOBJ) $(CMDOBJ) \
	    $(TESTOBJ) tests/unit/unit tests/bench/bench tests/bench/rbench \
	    tests/bench/results.tsv lib/redis/scripts.c lib/redis/scripts.def
	rm -rf build-asan build-fuzz build-valgrind demo.db

.PHONY: FORCE all links check test check-layers check-scripts check-asan \
	check-valgrind fuzz chaos faults crashfs-cycles install \
	install-strip uninstall bench demo cluster cluster-stop format clean distclean
