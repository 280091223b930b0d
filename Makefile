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

.PHONY: all deps run check sanitize bench clean help probe
all: probe ocbench

help:
	@echo "make            build ./ocbench (DEV=1: warnings are errors)"
	@echo "make deps       install the missing Debian packages (apt-get, needs root)"
	@echo "make run        deps + build + ocbench run --suite all + ocbench report"
	@echo "make check      deps + build + all tests"
	@echo "make sanitize   the tests under ASan + UBSan"
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

$(BUILD)/perf/%: tests/perf/%.c $(BUILD)/libocbench.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	else echo "deps: all Debian packages present"; fi

# The main job: measure everything, then report.
run: deps
	$(MAKE) all
	./ocbench run --suite all
	./ocbench report

check: deps
	$(MAKE) all $(BUILD)/ocbench-tests
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 tests/run.sh

sanitize:
	$(MAKE) BUILD=build-san CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
	  LDFLAGS="-fsanitize=address,undefined" build-san/ocbench build-san/ocbench-tests
	OCB_BUILD=build-san OCB_BIN=build-san/ocbench ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1 tests/run.sh

bench: all $(BENCH_BIN)
	@for b in $(BENCH_BIN); do echo "== $$b"; $$b || exit 1; done

clean:
	rm -rf $(BUILD) build-san ocbench

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(MPI_CHECK_SRC:%.c=$(BUILD)/%.d) $(BUILD)/ocbench.d
