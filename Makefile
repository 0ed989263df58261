# Two commands on a fresh Debian machine: `make demo` and `make test` (see README.md).
# Everything below them installs what is missing, so each works from a fresh clone.
SHELL      := /bin/bash
BUILD      ?= build
ASAN_BUILD ?= build-asan
VENV       ?= .venv
JOBS       ?= $(shell nproc)
PY         := $(VENV)/bin/python
STAMP      := .stamps

.PHONY: all deps venv pkg build build-asan test test-cpp test-asan test-python test-sdist demo bench fuzz schema clean
# What the Python package is built from, and what it ships (the firmware images, their SDK,
# configs/): a change here reinstalls the package.
PKG_SOURCES := $(shell find models platform bindings firmware -name '*.cpp' -o -name '*.h' -o -name '*.c' \
                 -o -name '*.cmake' -o -name '*.in' -o -name CMakeLists.txt 2>/dev/null) \
               $(shell find configs -type f 2>/dev/null) CMakeLists.txt pyproject.toml

all: build pkg

deps: $(STAMP)/deps
$(STAMP)/deps: scripts/setup-debian.sh
	@scripts/setup-debian.sh
	@mkdir -p $(STAMP) && touch $@

venv: $(STAMP)/venv
$(STAMP)/venv: requirements.txt $(STAMP)/deps
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@mkdir -p $(STAMP) && touch $@

# The ibvp package (and its console script .venv/bin/ibvp), editable: Python files are used
# from bindings/python, the extension is rebuilt here when C++ changes.
# The package ships $(BUILD)'s firmware images, not images of its own build: ibvp-sim and
# `ibvp run` load the same files (docs/firmware.md), and a change under firmware/ rebuilds
# them ($(BUILD) first) and reinstalls the package.
pkg: $(STAMP)/pkg
$(STAMP)/pkg: $(STAMP)/venv $(PKG_SOURCES) | build
	@echo "ibvp: building and installing the Python package into $(VENV)"
	@# The same compiler name as $(BUILD)'s (CMake's default, c++): ccache keys on the name,
	@# so the package's build then takes the libraries' objects from the cache.
	@CXX=$${CXX:-c++} $(PY) -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps \
	  --config-settings=cmake.define.IBVP_PACKAGE_FIRMWARE_FROM=$(abspath $(BUILD))/firmware -e .
	@touch $@

$(BUILD)/build.ninja: $(STAMP)/deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

$(ASAN_BUILD)/build.ninja: $(STAMP)/deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DIBVP_SANITIZE=ON

build-asan: $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)

test-cpp: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# SystemC switches coroutine stacks; ASan's fake stacks for use-after-return cannot follow.
# LeakSanitizer keeps scanning, at exit, what it last took for the main thread's stack: at
# times a SystemC thread's stack, already freed, and its tracer then dies of SIGSEGV (seen in
# about 1 run in 6 of an HCA test). use_stacks=0 leaves thread stacks out of the roots: it
# can only report more leaks, never fewer.
LSAN_ENV := LSAN_OPTIONS=use_stacks=0
test-asan: build-asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_stack_use_after_return=0:detect_leaks=1 $(LSAN_ENV) \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

test-python: build pkg
	IBVP_BUILD=$(abspath $(BUILD)) $(PY) -m pytest -q -n $(JOBS) --dist loadfile tests/python

# pip building the sdist into a fresh venv (tests/python/test_api_sdist.py): compiles the
# whole project once more, so not part of test-python.
test-sdist: build pkg
	IBVP_BUILD=$(abspath $(BUILD)) IBVP_TEST_SDIST=1 $(PY) -m pytest -q tests/python/test_api_sdist.py

test: test-cpp test-python test-asan

# Seed 004 Fig. 2(a): the run, its summary, the figure and the rates while the victim is on.
demo: pkg
	$(VENV)/bin/ibvp run configs/seed004/fig2a.yaml --out out/demo
	$(VENV)/bin/ibvp plot out/demo --kind rates-over-time --group --window 42ms,58ms \
	  --label "B/7=root link (B->B_C)" --label "A/1=inter-switch link (A->B)" \
	  --title "seed 004 Fig. 2(a): L=5, R=1, no congestion control"
	@echo "seed 004 reports for this case: victim about 15 % of its link, inter-switch link about 30 % used"

# Medians of several runs, with the machine, into bench/RESULTS.md.
bench: build pkg
	$(PY) bench/run_benchmarks.py --build $(BUILD)

# The input fuzzer at length (docs/fuzzing.md): FUZZ_COUNT mutants of seed FUZZ_SEED against
# the sanitizer build; prints the classification, keeps failing inputs under the work dir.
FUZZ_COUNT ?= 3000
FUZZ_SEED  ?= 1
fuzz: build-asan
	ASAN_OPTIONS=detect_stack_use_after_return=0:detect_leaks=1 $(LSAN_ENV) UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  python3 tests/fuzz/fuzz.py --sim $(ASAN_BUILD)/ibvp-sim --count $(FUZZ_COUNT) --seed $(FUZZ_SEED) \
	  --jobs $(JOBS) --timeout 60 $(FUZZ_ARGS)

schema: build
	$(BUILD)/ibvp-sim --schema docs/scenario.schema.json --reference docs/parameters.md

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(STAMP) out
