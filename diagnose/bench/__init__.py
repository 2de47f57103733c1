"""``diagnose bench sampling``: the shared-prefix engine against what users would pick instead.

One job (one prompt; seeds x temperatures rows; one token budget) is run in this
process, one system after the other, on the same threads:

* the engine (:mod:`diagnose.decode.engine`), with every row's reproducibility checked;
* Hugging Face ``generate(num_return_sequences=seeds)`` once per temperature (``hf``);
* Hugging Face with one shared prefill whose cache is copied to the rows (``hf``);
* llama.cpp on the same GGUF file through llama-cpp-python, when installed (``llamacpp``);

and beside them the machine's limit for the job (``roofline``).
"""

from diagnose.bench.builtin import builtin_case
from diagnose.bench.sampling import BenchResult, run_bench

__all__ = ["BenchResult", "builtin_case", "run_bench"]
