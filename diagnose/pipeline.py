"""The whole diagnosis: input stage → sampling stage → triage → report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from diagnose.case import Case
from diagnose.environment import fingerprint
from diagnose.analysis import InputAnalysis
from diagnose.inputs import analyze_inputs
from diagnose.models import ModelRegistry
from diagnose.progress import Progress, SilentProgress
from diagnose.prompt import build_messages, flat_prompt
from diagnose.reader.choose import NOT_ASSESSED, ReaderPlan
from diagnose.reader.choose import plan as plan_reader
from diagnose.report import ReaderInfo, Report, SamplingReport, VerdictBasis, deciding_finding, verdict_of
from diagnose.settings import Settings
from diagnose.triage import DeterminismCheck, TriageContext, triage
from diagnose.triage.input_rules import lost_in_the_middle_at

if TYPE_CHECKING:
    from diagnose.inputs.reading import Reader
    from diagnose.nightly.runner import DiagnoseFn
    from diagnose.decode.remote import RemoteBackend


@dataclass
class Diagnoser:
    """Runs diagnoses with one settings object and one model registry (reused across cases)."""

    settings: Settings
    registry: ModelRegistry
    progress: Progress = field(default_factory=SilentProgress)
    _servers: dict = field(default_factory=dict)
    """Reader servers by URL (``--reader URL``), opened once."""

    @classmethod
    def from_settings(cls, settings: Settings, progress: Progress | None = None,
                      registry: ModelRegistry | None = None) -> "Diagnoser":
        """``registry``: models already shared with other diagnosers of this process (the API's
        inline engine and its embedded worker); default, a new one reporting to ``progress``."""
        progress = progress or SilentProgress()
        if registry is None:
            registry = ModelRegistry(settings.models, notify=progress.phase)
        return cls(settings, registry, progress)

    def analyze(self, case: Case, reader: str | None = None, legacy: str | None = None,
                sampled_backend=None) -> tuple[InputAnalysis, list[int]]:
        """The input stage; also returns the assembled prompt's token ids.

        ``reader`` and ``legacy`` choose who reads the documents (:meth:`reader_plan`); the prompt is
        assembled (and refused when too large) before any reader loads. ``sampled_backend`` is the
        model being diagnosed, for ``sampled``."""
        self.progress.phase("loading tokenizer")
        counter = self.registry.prompt_counter(case.model)
        prompt_ids = counter.chat_ids(build_messages(case))
        plan = self.reader_plan(case, reader, legacy)
        chosen, info = self._reader(case, plan, sampled_backend)
        self.progress.phase("embedding documents")
        analysis = analyze_inputs(
            case,
            self.registry.embedder(),
            self.settings.inputs,
            count_tokens=counter.count_tokens,
            prompt=flat_prompt(case),
            context_window=counter.context_window,
            reader=_ProgressReader(chosen, self.progress) if chosen is not None else None,
        )
        info.calibrated = self.settings.inputs.reader_calibration.fitted_on(info.kernels)
        analysis.report.reader = info
        if not plan.reads:
            analysis.report.not_assessed = list(NOT_ASSESSED)
            analysis.report.reader_note = plan.fallback
        analysis.report.prompt_tokens = len(prompt_ids)
        analysis.report.lost_in_the_middle = lost_in_the_middle_at(
            analysis.report.strongest_center_position, analysis.report.prompt_tokens, self.settings.triage)
        return analysis, prompt_ids

    def reader_plan(self, case: Case, asked: str | None = None, legacy: str | None = None) -> ReaderPlan:
        """Who reads ``case``'s documents: ``asked`` (``--reader``), ``legacy`` (``--read``/``--static``),
        the case's ``reader:``, the setting, else the default (:func:`diagnose.reader.choose.plan`)."""
        return plan_reader(asked, legacy, case.reader, self.settings.models.reader,
                           reference_installed=self.registry.reference_installed())

    def _reader(self, case: Case, plan: ReaderPlan, sampled_backend) -> tuple["Reader | None", ReaderInfo]:
        if plan.choice == "static":
            return None, ReaderInfo(name="static", kind="static")
        if plan.choice == "reference":
            from diagnose.reader.structured import reference_reader

            reader = reference_reader(self.registry.reference_engine())
            return reader, ReaderInfo(**reader.identity.to_dict())
        if plan.choice == "sampled":
            from diagnose.inputs.reading import DocumentReader

            backend = sampled_backend or self.registry.generator(case.model)
            identity = getattr(backend, "identity", None) or {}
            return DocumentReader(backend), ReaderInfo(name=str(identity.get("id") or backend.name), kind="sampled",
                                                       sha256=identity.get("sha256"))
        if plan.choice not in self._servers:
            from diagnose.reader.structured import server_reader

            from diagnose.settings import openai_api_key

            self._servers[plan.choice] = server_reader(plan.choice, self.settings.models.reader_model, openai_api_key())
        reader = self._servers[plan.choice]
        return reader, ReaderInfo(**reader.identity.to_dict())

    def inputs(self, case: Case, read: bool = False, reader: str | None = None) -> Report:
        """Input stage only. ``reader``: who reads the documents (``--reader``; see
        :meth:`reader_plan`); ``read`` (the older ``--read``) means ``sampled``."""
        analysis, _ = self.analyze(case, reader, "sampled" if read else None)
        backend = self.registry.generator(case.model) if analysis.report.reader.kind == "sampled" else None
        environment = fingerprint(backend.identity if backend else None, self.registry.embedder_identity(),
                                  backend.name if backend else None)
        return self._report(case, analysis, None, environment, None)

    def run(
        self,
        case: Case,
        ablation: bool = False,
        baseline_environment: dict | None = None,
        remote: "RemoteBackend | None" = None,
        seed_offset: int = 0,
        read: bool | None = None,
        reader: str | None = None,
        repair: bool = False,
        repair_budget: int | None = None,
        controls: bool = True,
    ) -> Report:
        """The whole pipeline on the case's model.

        ``ablation`` also samples the question without documents and with the dominant
        center only; ``baseline_environment`` (a previous report's ``environment``)
        is compared with this run's fingerprint. ``remote`` samples on an
        OpenAI-compatible server instead of the case's local model. ``seed_offset``
        moves every sample's seed (0: sample ``i`` uses seed ``i``). ``reader`` says who
        reads the documents for the input stage (:meth:`reader_plan`; default: the reference
        reader when installed); the older ``read`` means ``sampled`` when True (the sampled
        model reads) and ``static`` when False.
        ``controls`` (the default) also samples the control (:mod:`diagnose.sampling.controls`)
        and decides each sampling finding that blames the context against it
        (:mod:`diagnose.triage.controlled`); without, the verdict is uncontrolled.
        ``repair`` then re-samples each candidate repair the findings call for, with
        the same seeds on the same backend, within ``repair_budget`` samples (None:
        ``diagnose.repair.default_budget``), and reports each one's verdict (``repairs``).
        """
        from diagnose.sampling.stage import run_sampling, sample_traces

        self.progress.phase("loading generator")
        backend = remote or self.registry.generator(case.model)
        analysis, prompt_ids = self.analyze(case, reader, None if read is None else "sampled" if read else "static",
                                            backend)
        rows = len(case.sampling.temperatures) * case.sampling.seeds
        self.progress.phase(
            f"sampling {rows} rows on {backend.name}",
            total=rows if remote else case.sampling.max_new_tokens,
        )
        sampling, traces = run_sampling(
            case,
            backend,
            prompt_ids,
            self.registry.embedder(),
            analysis,
            on_step=lambda position, live: self.progress.update(position),
            seed_offset=seed_offset,
            settings=self.settings.sampling,
        )
        if remote is None:  # a server applies its own chat template to the messages
            sampling.prompt_text = self.registry.prompt_counter(case.model).text(prompt_ids)
        self.progress.phase("determinism check")
        probe = max(traces, key=lambda tr: (tr.row.temperature, -tr.row.seed))
        alone = sample_traces(case, backend, prompt_ids, [probe.row])[0]
        determinism = DeterminismCheck(
            temperature=probe.row.temperature,
            seed=probe.row.seed,
            batch_tokens=len(probe.steps),
            alone_tokens=len(alone.steps),
            first_mismatch=_first_mismatch(
                [s.token for s in probe.steps], [s.token for s in alone.steps]
            ),
        )
        if ablation:
            from diagnose.sampling.ablation import run_ablation

            self.progress.phase("context ablation (no documents, dominant center only)")
            sampling.ablation = run_ablation(
                case, backend, self.registry.embedder(), analysis, sampling.runs, settings=self.settings.sampling
            )
        control = None
        if controls:
            from diagnose.sampling.controls import run_control

            self.progress.phase(f"control ({rows} rows, the same seeds)")
            sampling.control, control_traces = run_control(
                case, backend, self.registry.prompt_counter(case.model).chat_ids, self.registry.embedder(),
                analysis, seed_offset=seed_offset, settings=self.settings.sampling,
            )
            control = (traces, control_traces)
        environment = fingerprint(backend.identity, self.registry.embedder_identity(), backend.name)
        environment["reproducibility"] = determinism.reproducibility
        if remote:
            environment["framework"] = remote.semantics
            environment.update(server={"base_url": remote.base_url, **{
                key: remote.identity.get(key) for key in ("server_model", "served", "system_fingerprint")}},
                threads=None)  # the server's threads, not this process's, produced the samples
        report = self._report(case, analysis, sampling, environment, determinism, baseline_environment,
                              control=control, remote=remote is not None)
        if repair:
            report = self._repair(report, case, analysis, traces, backend, seed_offset, repair_budget)
        return report

    def _repair(self, report: Report, case: Case, analysis: InputAnalysis, traces, backend,
                seed_offset: int, budget: int | None) -> Report:
        """The report with its verified repairs (``run --repair``), findings noting them."""
        import msgspec

        from diagnose.repair import run_repairs

        outcome = run_repairs(
            case, analysis, report.sampling, traces, report.findings, backend=backend,
            embedder=self.registry.embedder(), counter=self.registry.prompt_counter(case.model),
            thresholds=self.settings.triage, environment=report.environment, budget=budget,
            seed_offset=seed_offset, progress=self.progress,
            sampling_settings=self.settings.sampling,
        )
        return msgspec.structs.replace(report, findings=outcome.findings, repairs=outcome.repairs,
                                       repairs_skipped=outcome.skipped, repair=outcome.overview)

    def _report(
        self,
        case: Case,
        analysis: InputAnalysis,
        sampling: SamplingReport | None,
        environment: dict,
        determinism: DeterminismCheck | None,
        baseline_environment: dict | None = None,
        control: tuple[list, list] | None = None,
        remote: bool = False,
    ) -> Report:
        """Triage, then (with a sampling run) the findings that blame the context decided against
        the control (``control``: the main run's and the control's traces) and the stand-in's own
        behaviour reported as such (:mod:`diagnose.triage.stand_in`)."""
        context = TriageContext(
            case=case,
            inputs=analysis.report,
            sampling=sampling,
            environment=environment,
            thresholds=self.settings.triage,
            sampling_settings=self.settings.sampling,
            determinism=determinism,
            baseline_environment=baseline_environment,
        )
        findings = triage(context)
        stand_in = None
        if sampling is not None:
            from diagnose.triage.stand_in import as_stand_in, stand_in_reason

            if control is not None and sampling.control is not None:
                from diagnose.triage.controlled import decide

                findings = decide(findings, sampling, control[0], sampling.control, control[1])
            stand_in = stand_in_reason(case, remote)
            findings = as_stand_in(findings, stand_in)
        deciding = deciding_finding(findings)
        return Report(
            case_id=case.id,
            verdict=verdict_of(findings),
            input=analysis.report,
            sampling=sampling,
            findings=findings,
            environment=environment,
            basis=VerdictBasis(deciding=deciding.rule if deciding else None,
                               controlled=sampling is not None and sampling.control is not None, stand_in=stand_in),
        )


class _ProgressReader:
    """A reader that reports each document read on the progress bar."""

    def __init__(self, reader, progress: Progress) -> None:
        self.reader = reader
        self.progress = progress
        self.decides = reader.decides

    def read(self, question: str, documents: list[str], yes_no: bool):
        name = getattr(getattr(self.reader, "identity", None), "name", None) or getattr(
            getattr(self.reader, "backend", None), "name", "the generator")
        self.progress.phase(f"reading {len(documents)} documents with {name}", total=len(documents))
        return self.reader.read(question, documents, yes_no, on_document=self.progress.update)

    def compare(self, question: str, pairs: list[tuple[str, str]]):
        self.progress.phase(f"comparing {len(pairs)} pairs of documents", total=None)
        return self.reader.compare(question, pairs)


def _first_mismatch(a: list[int], b: list[int]) -> int | None:
    for position, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return position
    return None if len(a) == len(b) else min(len(a), len(b))


def diagnose_inputs(case: Case, settings: Settings | None = None) -> Report:
    """Input stage only (contract section 5). Builds settings from the environment when not given."""
    return Diagnoser.from_settings(settings or Settings.from_env()).inputs(case)


def diagnose_case(case: Case, settings: Settings | None = None) -> Report:
    """The whole pipeline (contract section 5)."""
    return Diagnoser.from_settings(settings or Settings.from_env()).run(case)


def nightly_diagnose_factory(reader: str | None = None) -> "DiagnoseFn":
    """What ``diagnose nightly`` runs per case: one Diagnoser (models loaded once, settings from
    the environment) whose reports go to the regression gate; ``reader``: ``--reader``. Module
    level, so a ``--workers`` pool can pickle it (with ``functools.partial``)."""
    diagnoser = Diagnoser.from_settings(Settings.from_env())
    return lambda case, seed_offset: diagnoser.run(case, seed_offset=seed_offset, reader=reader)
