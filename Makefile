# ocbench — one build. `make` builds ./ocbench; see `make help`.
# DEV=1 adds -Werror. Libraries are found with pkg-config; MPI through mpicc.

CC       := mpicc
VERSION  := 0.1.0
GIT_SHA  := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
PKGS     := sqlite3 libcjson openblas lapacke papi zlib librsb
BUILD    := build

# Debian packages the build, the tests and the data need (`make deps` installs the missing).
# libstdc++-12-dev: librsb is C++ inside, its pkg-config links -lstdc++.
DEB_PKGS := gcc libc6-dev make pkg-config git ca-certificates sqlite3 \
            libsqlite3-dev libcjson-dev libopenblas-dev liblapacke-dev libpapi-dev \
            libcriterion-dev libopenmpi-dev openmpi-bin gnuplot-nox zlib1g-dev \
            librsb-dev libstdc++-12-dev dataset-fashion-mnist fortunes

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# CFLAGS/LDFLAGS are the user's (optimisation, sanitizers); the project's own flags are
# kept apart so that `make CFLAGS=...` cannot drop the include paths.
CFLAGS   ?= -O2 -g
OCB_CFLAGS := -std=gnu11 -Wall -Wextra -fopenmp -MMD -MP $(PKG_CFLAGS) \
            -DOCB_VERSION='"$(VERSION)"' -DOCB_GIT_SHA='"$(GIT_SHA)"' \
            -DOCB_CFLAGS='"$(strip $(CFLAGS))"'
ifeq ($(DEV),1)
OCB_CFLAGS += -Werror
endif
ALL_CFLAGS = $(OCB_CFLAGS) $(CFLAGS)
LDLIBS   += $(PKG_LIBS) -fopenmp -lm

# Every .c in these folders is part of the library; ocbench.c holds main().
LIB_DIRS := common db kernels analysis workloads collect report cli
LIB_SRC  := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/db/schema_blob.o
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
BENCH_SRC := $(wildcard tests/perf/*.c)
BENCH_BIN := $(BENCH_SRC:tests/perf/%.c=$(BUILD)/perf/%)
# Fuzz targets (tests/fuzz/fuzz_*.c, one LLVMFuzzerTestOneInput each). `make fuzz` links
# them with libFuzzer (clang, ASan+UBSan) into build-fuzz/fuzz/; `make check` links them
# with tests/fuzz/replay_main.c into $(BUILD)/fuzz-replay/ and replays the seed corpora
# and past crashes (tests/fuzz/regress/) once.
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(filter-out tests/fuzz/fuzz_util.c,$(wildcard tests/fuzz/fuzz_*.c)))
REPLAY_BIN := $(FUZZ_NAMES:%=$(BUILD)/fuzz-replay/%)
FUZZ_SECONDS ?= 60
# clang's libFuzzer and OpenMP runtime (Debian: clang-14 ships the compiler, the two
# -dev packages the fuzzer and libomp archives), valgrind for `make valgrind`.
HARDEN_PKGS := clang libclang-rt-14-dev libomp-14-dev valgrind

.PHONY: all deps run check sanitize bench clean help probe fuzz fuzz-bins fuzz-seeds deps-harden torture valgrind
all: probe ocbench

help:
	@echo "make            build ./ocbench (DEV=1: warnings are errors)"
	@echo "make deps       install the missing Debian packages (apt-get, needs root)"
	@echo "make run        deps + build + ocbench run --suite all + ocbench report"
	@echo "make check      deps + build + all tests"
	@echo "make sanitize   the tests under ASan + UBSan"
	@echo "make fuzz       every fuzz target for FUZZ_SECONDS (60) each, libFuzzer + ASan/UBSan"
	@echo "make torture    50 kill -9 of run --suite all --quick, 10 killed MPI ranks"
	@echo "make valgrind   memcheck of every suite (tests/valgrind/: --quick paths, small sizes), report, compare, export, import, merge"
	@echo "make bench      harness-overhead and other micro benchmarks"
	@echo "make clean      remove build products"

# Feature probe: say what this build found.
probe:
	@pkg-config --exists $(PKGS) || { echo "missing libraries: run 'make deps' (as root)"; exit 2; }
	@command -v $(CC) >/dev/null || { echo "missing mpicc: run 'make deps' (as root)"; exit 2; }

ocbench: $(BUILD)/ocbench.o $(BUILD)/libocbench.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

# The sanitizer build's binary stays in its own folder.
build-san/ocbench: build-san/ocbench.o build-san/libocbench.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(BUILD)/libocbench.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The schema is kept as SQL in db/schema.sql and embedded verbatim.
$(BUILD)/db/schema_blob.o: db/schema_blob.S db/schema.sql
	@mkdir -p $(dir $@)
	$(CC) -c -o $@ db/schema_blob.S

$(BUILD)/ocbench-tests: $(TEST_OBJ) $(BUILD)/libocbench.a | $(BUILD)/dist_check
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) -lcriterion

# The MPI program tests/test_dist.c runs under mpirun (its own main; not in the suite).
MPI_CHECK_SRC := $(wildcard tests/mpi/*.c)
$(BUILD)/dist_check: $(MPI_CHECK_SRC:%.c=$(BUILD)/%.o) $(BUILD)/libocbench.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(BUILD)/fuzz-replay/%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/fuzz_util.o \
		$(BUILD)/tests/fuzz/replay_main.o $(BUILD)/libocbench.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

# libFuzzer build: the whole library under clang (through mpicc, OMPI_CC=clang) with
# coverage + ASan + UBSan, in its own folder. Not DEV: clang warns where gcc does not.
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# clang 14 refuses some of the kernels' target-attribute intrinsics and _Float16: those
# files (no parser among them) are compiled by gcc as in the normal build, uninstrumented.
FUZZ_GCC_OBJ := $(patsubst %.c,build-fuzz/%.o,$(wildcard kernels/*.c) workloads/quant_rtn.c \
		  workloads/quant_ternary.c)
$(FUZZ_GCC_OBJ): override CC := mpicc
$(FUZZ_GCC_OBJ): override CFLAGS := -O2 -g
build-fuzz/fuzz/%: build-fuzz/tests/fuzz/fuzz_%.o build-fuzz/tests/fuzz/fuzz_util.o \
		build-fuzz/libocbench.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDFLAGS) $(LDLIBS)

.PRECIOUS: $(BUILD)/tests/fuzz/%.o build-fuzz/tests/fuzz/%.o
fuzz-bins: $(FUZZ_NAMES:%=build-fuzz/fuzz/%)

# The binary seeds (GGUF files, checkpoints), written by ocbench's own writers; the
# checkpoint target's inputs start with its mode byte (1: fix length and crc, 0: as is).
$(BUILD)/fuzz-seeds-gen: $(BUILD)/tests/fuzz/seeds_gen.o $(BUILD)/libocbench.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

fuzz-seeds: $(BUILD)/fuzz-seeds-gen
	@d=$$(mktemp -d) && $(BUILD)/fuzz-seeds-gen $$d && \
	for f in gguf-1 gguf-3; do cp $$d/$$f.gguf tests/fuzz/corpus/gguf/; \
	  cp $$d/$$f.gguf tests/fuzz/corpus/model_spec/; done && \
	for f in mlp lm; do cp $$d/$$f.ckpt tests/fuzz/corpus/model_spec/; \
	  { printf '\001'; cat $$d/$$f.ckpt; } > tests/fuzz/corpus/checkpoint/$$f-fixcrc; \
	  { printf '\000'; cat $$d/$$f.ckpt; } > tests/fuzz/corpus/checkpoint/$$f-asis; done; \
	rm -rf $$d

# Each target for FUZZ_SECONDS from its seed corpus (read-only; new inputs go to
# build-fuzz/corpus/T); a crash leaves build-fuzz/crash-T-* and fails the target.
fuzz: deps-harden
	$(MAKE) BUILD=build-fuzz CC="env OMPI_CC=clang mpicc" \
	  CFLAGS="-O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN)" LDFLAGS="$(FUZZ_SAN)" fuzz-bins
	@for t in $(FUZZ_NAMES); do \
	  mkdir -p build-fuzz/corpus/$$t; echo "== fuzz $$t $(FUZZ_SECONDS) s"; \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 build-fuzz/fuzz/$$t \
	    -max_total_time=$(FUZZ_SECONDS) -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
	    -artifact_prefix=build-fuzz/crash-$$t- build-fuzz/corpus/$$t tests/fuzz/corpus/$$t \
	    > build-fuzz/fuzz-$$t.log 2>&1; rc=$$?; tail -n 25 build-fuzz/fuzz-$$t.log; \
	  [ $$rc = 0 ] || exit 1; \
	done

# Kill torture (tests/torture.sh: KILLS=50 kill -9 of run --suite all --quick, MPI_KILLS
# killed ranks of the dist suite) and valgrind memcheck of the CLI paths
# (tests/valgrind.sh); both need the built ./ocbench and take many minutes.
torture: all
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 tests/torture.sh

valgrind: deps-harden all
	tests/valgrind.sh

$(BUILD)/perf/%: tests/perf/%.c $(BUILD)/libocbench.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

# $(call apt_missing,PACKAGES): installs those of PACKAGES that dpkg does not list.
define apt_missing
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	else echo "deps: all Debian packages present"; fi
endef

deps:
	$(call apt_missing,$(DEB_PKGS))

deps-harden:
	$(call apt_missing,$(HARDEN_PKGS))

# The main job: measure everything, then report.
run: deps
	$(MAKE) all
	./ocbench run --suite all
	./ocbench report

check: deps
	$(MAKE) all $(BUILD)/ocbench-tests $(REPLAY_BIN)
	tests/fuzz/replay.sh $(BUILD)
	OCB_BUILD=$(BUILD) tests/run_other_vendor.sh
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 tests/run.sh

# The ab tests compare ./ocbench with itself (the two binaries under test are children of
# the sanitized driver), so the plain binary is built first.
sanitize:
	$(MAKE) ocbench
	$(MAKE) BUILD=build-san CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
	  LDFLAGS="-fsanitize=address,undefined" build-san/ocbench build-san/ocbench-tests \
	  $(FUZZ_NAMES:%=build-san/fuzz-replay/%)
	ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1 tests/fuzz/replay.sh build-san
	OCB_BUILD=build-san OCB_BIN=build-san/ocbench ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1 tests/run.sh

bench: all $(BENCH_BIN)
	@for b in $(BENCH_BIN); do echo "== $$b"; $$b || exit 1; done

clean:
	rm -rf $(BUILD) build-san build-fuzz ocbench

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(wildcard $(BUILD)/tests/fuzz/*.d) $(MPI_CHECK_SRC:%.c=$(BUILD)/%.d) $(BUILD)/ocbench.d
