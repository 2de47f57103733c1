"""The report (contract section 3) and its all-or-nothing writer.

Field names are the contract's keys; extra fields beyond the contract are
marked "extension" in their docstrings.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

import msgspec

Stage = Literal["input", "sampling", "length", "environment", "framework"]
STAGE_ORDER: tuple[Stage, ...] = ("input", "sampling", "length", "environment", "framework")
Severity = Literal["info", "warn", "fail"]
SEVERITY_RANK: dict[str, int] = {"info": 0, "warn": 1, "fail": 2}
#: The same order for what ``--fail-on`` compares: a verdict (``ok``) and a nightly case's status (``pass``).
LEVEL_RANK: dict[str, int] = {**SEVERITY_RANK, "ok": 0, "pass": 0}


def reaches(level: str, fail_on: str) -> bool:
    """Whether a severity, verdict or case status is at or above ``fail_on`` (``never``: nothing is)."""
    return fail_on != "never" and LEVEL_RANK[level] >= LEVEL_RANK[fail_on]
"""How bad each severity is: higher is worse."""
Verdict = Literal["ok", "warn", "fail"]


class GravityCenter(msgspec.Struct, kw_only=True):
    id: str
    documents: list[str]
    mass: float
    """Share of the non-noise documents' weight; masses sum to 1."""
    label: str
    """Short human-readable name, e.g. the answer the center supports."""
    standing: Literal["current", "superseded"] | None = None
    """Contract §8: ``superseded`` when the center's documents are archived or all older than a
    disagreeing center's; ``current`` for the newest or authoritative one; else None."""


class ConflictPair(msgspec.Struct, kw_only=True):
    a: str
    b: str
    kind: str
    """value_mismatch | entity_ambiguity | stance | topic_split | outdated (a superseded center
    against the current one)."""
    evidence: str
    """The differing spans, quoted from each document."""


class Conflict(msgspec.Struct, kw_only=True):
    detected: bool
    score: float
    pairs: list[ConflictPair] = []
    features: dict[str, float] = {}
    """Extension: what the score was computed from (``diagnose.inputs.conflict.FEATURES``)."""
    threshold: float | None = None
    """Extension: the probability at or above which ``detected`` is true (the calibration's operating point);
    a pair of ``kind: "outdated"`` makes it true at any probability."""
    probability: float = 0.0
    """Calibrated 0..1 probability that the documents support two or more answers (equal to ``score``)."""
    state: Literal["conflict", "unsure", "none"] = "none"
    """``conflict`` at the operating point or with an ``outdated`` pair (``detected``), ``unsure`` between
    the operating point and the unsure cut, else ``none``."""


class AnswerValue(msgspec.Struct, kw_only=True):
    """A typed answer (:mod:`diagnose.text.values`)."""

    kind: str
    value: str
    """The normalised value (the parser's key), e.g. ``quantity:mass:3`` for "3,000 mg"."""
    unit: str | None = None


class ReaderInfo(msgspec.Struct, kw_only=True):
    """Contract §8: which reader read the documents."""

    name: str
    kind: Literal["static", "reference", "sampled", "server"]
    sha256: str | None = None
    kernels: str | None = None
    """Extension: the CPU features the in-process reader's llama.cpp was built for; its greedy
    readings depend on them (an AVX-512 build sums in another order than an AVX2 one)."""
    calibrated: bool | None = None
    """Extension: whether the conflict calibration was fitted on readings of a build with these
    ``kernels`` (None: not known, or no build to compare)."""


class DocumentView(msgspec.Struct, kw_only=True):
    """Extension: per-document facts for pages and triage."""

    id: str
    center: str | None
    """Center id, or None for a noise document."""
    relevance: float
    """Cosine similarity of the document to the question."""
    tokens: int
    """Token count with the generator's tokenizer (0 when no tokenizer was loaded)."""
    position: list[float]
    """2-D projection of the embedding, for the document map."""
    answer: str | None = None
    """The answer this document supports (a value as written, or its claim), when one was found."""
    claim: str | None = None
    """The document's sentence that best answers the question."""
    read_answer: str | None = None
    """Read tier: the generator's answer from this document alone."""
    yes_margin: float | None = None
    """Read tier, yes/no questions: log P(yes) - log P(no) from this document alone."""
    date: str | None = None
    """The document's date (ISO 8601): the case's ``documents[].date``, else as read from its text."""
    authority: str | None = None
    """The case's ``documents[].authority``, else ``archived`` when its text says it is superseded."""
    date_source: Literal["field", "text"] | None = None
    """Contract §8: where ``date`` came from."""
    answer_value: AnswerValue | None = None
    """Contract §8: the typed answer read from this document, when it is a value."""
    about: str | None = None
    """Reader: what the document says it is about."""


class InputReport(msgspec.Struct, kw_only=True):
    gravity_centers: list[GravityCenter]
    noise_documents: list[str]
    conflict: Conflict
    documents: list[DocumentView] = []
    """Extension: one entry per case document, in case order."""
    prompt_tokens: int = 0
    """Extension: tokens of the assembled prompt (0 when no tokenizer was loaded)."""
    context_window: int = 0
    """Extension: the generator's context window in tokens (0 when unknown)."""
    instruction_conflicts: list[list[str]] = []
    """Extension: pairs of contradictory instructions found in system/template."""
    delimiter_issue: str | None = None
    """Extension: why the documents are not clearly delimited in a custom template, or None."""
    strongest_center_position: float | None = None
    """Extension: where the strongest center's documents sit in the prompt (0 start .. 1 end)."""
    lost_in_the_middle: bool = False
    """Extension: the strongest center sits in the middle of a long prompt."""
    tier: Literal["static", "read"] = "static"
    """How the centers were made: from the text alone, or with the generator reading each document."""
    reader: ReaderInfo | None = None
    """Contract §8: the reader of the documents (``static``: none, the text alone)."""
    not_assessed: list[str] = []
    """Checks no model judged because no reader read the documents (``stance``, ``entity``,
    ``standing_from_text``); empty when a reader read them."""
    reader_note: str | None = None
    """Why the default reader fell back to static, when it did."""
    stance: Literal["assessed", "not_assessed"] | None = None
    """Yes/no questions: whether a model judged the documents' stances (the read tier's pairwise
    question); ``not_assessed``: no stance signal went into the verdict. None for other questions."""


class Sample(msgspec.Struct, kw_only=True):
    seed: int
    text: str
    finish_reason: Literal["stop", "length"]
    tokens: int = 0
    """Extension: generated tokens."""
    cluster: int = 0
    """Extension: meaning-cluster index within the run."""
    center: str = "none"
    """Extension: the gravity center this sample followed, or "none"."""
    compliant: bool = True
    """Extension: passed every constraint."""
    first_token: str = ""
    """Extension: the first generated token (as in ``first_tokens``), for per-sample statistics."""
    position: list[float] = []
    """Extension: the sample's embedding in the document map's 2-D frame (``DocumentView.position``);
    empty when there is no map frame (fewer than 2 documents) or the text has no embedding."""
    answer: str = ""
    """Extension: what the sample answers, as read by the input stage's extractor ("16 weeks" for
    "16" where the documents answer in weeks); "" when it states no answer."""
    answer_kind: Literal["answer", "other", "none"] = "none"
    """Extension: ``answer`` (states an answer of the kind the documents give), ``other`` (answers
    something else: another kind of value, or a list of the documents), ``none`` (free text)."""


class Bifurcation(msgspec.Struct, kw_only=True):
    """Extension: a position where the top two candidates were nearly tied and samples split."""

    position: int
    context: str
    candidates: list[str]
    margin: float


class TemperatureRun(msgspec.Struct, kw_only=True):
    temperature: float
    n: int
    first_token_divergence: float
    mean_entropy: float | None
    """None when the backend cannot report it (see ``unavailable``)."""
    perplexity: float | None
    """None when the backend cannot report it (see ``unavailable``)."""
    repetition_rate: float
    semantic_entropy: float
    compliance_rate: float
    truncation_rate: float
    center_pull: dict[str, float]
    samples: list[Sample]
    first_tokens: dict[str, int] = {}
    """Extension: count of each distinct first generated token."""
    entropy_by_position: list[float] = []
    """Extension: mean sampled-distribution entropy at each generated position."""
    bifurcations: list[Bifurcation] = []
    unavailable: list[str] = []
    """Extension: metrics this backend cannot compute exactly; their values are null."""
    temperature_last_divergence: float = 0.0
    """Extension: share of generated positions where applying temperature last
    (llama.cpp, Ollama) would have kept a different candidate set."""
    answer_kinds: dict[str, int] = {}
    """Extension: how many samples give an answer, answer something else, or state none
    (``Sample.answer_kind``); meaning clusters and center pull read the answers."""


class AblationRun(msgspec.Struct, kw_only=True):
    """Extension: one context variant sampled at one temperature (``run --ablation``)."""

    variant: str
    """full_context | no_documents | dominant_center."""
    documents: list[str]
    temperature: float
    mean_entropy: float
    semantic_entropy: float
    first_token_divergence: float
    center_pull: dict[str, float]


class ControlRun(msgspec.Struct, kw_only=True):
    """Extension: the control the sampling findings were decided against (``run``'s default):
    the same model, seeds and settings on the context reduced to one consistent center."""

    variant: Literal["dominant_center", "no_documents"]
    description: str
    documents: list[str]
    center: str | None = None
    """The gravity center the control keeps (None: no documents)."""
    runs: list[TemperatureRun]
    """One per temperature of the main run, measured against the full case's centers."""
    wall_seconds: float = 0.0
    """What the control cost (its sampling and measurement)."""


class PromptMessage(msgspec.Struct, kw_only=True):
    """One chat message of the prompt the sampled model was given."""

    role: str
    """``system`` or ``user``."""
    content: str


class SamplingReport(msgspec.Struct, kw_only=True):
    runs: list[TemperatureRun]
    backend: str = "transformers"
    """Extension: which backend sampled."""
    wall_seconds: float = 0.0
    """Extension: time spent sampling."""
    ablation: list[AblationRun] = []
    """Extension: context ablation runs, when asked for."""
    control: ControlRun | None = None
    """Extension: the control run (None with ``run --no-controls``: the verdict is uncontrolled)."""
    prompt: list[PromptMessage] = []
    """Extension: the assembled prompt as chat messages (the system prompt when the case has one,
    then the user turn with the documents laid out), as the sampled model was given them."""
    prompt_text: str = ""
    """Extension: the prompt as the model saw it after its chat template, decoded from the token
    ids with the template's special tokens; empty when a server sampled (it applies its own)."""

    def shown_prompt(self) -> tuple[str, str]:
        """``(text, what it is)``: the prompt after the model's chat template when recorded, else
        the chat messages with their roles; ``("", "")`` when neither was recorded."""
        if self.prompt_text:
            return self.prompt_text, "after the model's chat template"
        if self.prompt:
            return "\n\n".join(f"[{m.role}]\n{m.content}" for m in self.prompt), "the chat messages"
        return "", ""


class Finding(msgspec.Struct, kw_only=True):
    stage: Stage
    rule: str
    severity: Severity
    evidence: dict[str, Any]
    advice: str


RepairVerdict = Literal["fixes", "helps", "no_effect", "worse"]
"""How a repair changed the prompt's wobble (``diagnose.repair.verdict`` defines each)."""


class RepairRun(msgspec.Struct, kw_only=True):
    """One temperature of a repair: the original's metrics, the candidate's, and p-values."""

    temperature: float
    """The original run's temperature."""
    before: dict[str, float | None]
    after: dict[str, float | None]
    p: dict[str, float]
    """Per metric, the p-value of this temperature alone (not corrected for multiple tests;
    the verdict reads the Bonferroni-corrected tests pooled over temperatures, ``tests``)."""
    after_temperature: float = 0.0
    """Extension: the temperature the candidate was sampled at (differs only for a
    ``temperature`` repair)."""


class RepairTest(msgspec.Struct, kw_only=True):
    """Extension: one metric of one repair, pooled over temperatures, as the verdict reads it."""

    metric: str
    role: Literal["target", "guard"]
    """target: the wobble the answered finding is about; guard: must not get worse."""
    test: Literal["stratified_bootstrap", "fisher_exact"]
    before: float
    after: float
    diff: float
    """after - before (mean over temperatures, or pooled rates)."""
    p: float
    p_adjusted: float
    """Bonferroni: p x the number of tests of every repair sampled, at most 1."""
    min_change: float
    """The smallest change that counts, even when significant (the nightly gate's)."""
    outcome: Literal["better", "worse", "none"]


class RepairAnswer(msgspec.Struct, kw_only=True):
    """Extension: what the candidate's samples answer (repairs that remove documents)."""

    text: str
    """The first sample of the candidate's largest meaning cluster."""
    share: float
    """That cluster's share of its run."""
    center: str
    """The gravity center most of the candidate's samples follow (or "none")."""
    label: str
    center_share: float


class Repair(msgspec.Struct, kw_only=True):
    """A single change to the case, re-sampled with the same seeds and compared (contract section 6)."""

    id: str
    change: dict[str, Any]
    """``kind`` plus what changed (documents removed, the sentence added, old and new values)."""
    diff: str
    """Unified diff of the case (as YAML) before and after the change."""
    verdict: RepairVerdict
    runs: list[RepairRun]
    answers: list[str] = []
    """Extension: rule ids of the findings this change answers."""
    resolved: bool = False
    """Extension: none of the answered findings fires when triage is re-run on the candidate."""
    new_findings: list[str] = []
    """Extension: rules that fire on the candidate but not on the original."""
    tests: list[RepairTest] = []
    samples: int = 0
    """Extension: samples drawn for this candidate (what it cost of the budget)."""
    wall_seconds: float = 0.0
    answer: RepairAnswer | None = None
    note: str | None = None
    summary: str = ""
    """Extension: one line, e.g. 'fixes: center split 50% → 0% (T 0.7; Bonferroni p < 0.001)'."""


class SkippedRepair(msgspec.Struct, kw_only=True):
    """Extension: a candidate that did not fit the repair budget (listed, never dropped)."""

    id: str
    change: dict[str, Any]
    diff: str
    answers: list[str]
    samples: int
    """Samples it would have cost."""
    reason: str


class RepairOverview(msgspec.Struct, kw_only=True):
    """Extension: how ``--repair`` ran."""

    budget: int
    """Samples allowed (``--repair-budget``)."""
    default_budget: int
    spent: int
    tests: int
    """Size of the Bonferroni family: the metrics tested over every repair sampled."""
    alpha: float
    best: str | None
    """Id of the best verified repair (verdict fixes or helps), or None."""
    headline: str
    batching: str
    """How candidates were decoded (one batch with one prefill per candidate)."""
    wall_seconds: float = 0.0


class VerdictBasis(msgspec.Struct, kw_only=True):
    """Extension: what the verdict rests on, for the summary's first lines."""

    deciding: str | None
    """Rule id of the finding that set the verdict (the first of the worst severity); None for ok."""
    controlled: bool
    """The sampling findings were decided against a control run (``sampling.control``); false with
    ``run --no-controls`` (the verdict is then uncontrolled) and with ``inputs``."""
    stand_in: str | None = None
    """Why the sampled model stands in for the served one (its own behaviour is then ``info``), or None."""


class Report(msgspec.Struct, kw_only=True):
    case_id: str
    verdict: Verdict
    input: InputReport
    findings: list[Finding]
    environment: dict[str, Any]
    sampling: SamplingReport | None = None
    """Absent with ``diagnose inputs``."""
    repairs: list[Repair] = []
    """Contract section 6 (``run --repair``): verified repairs, best first; absent without it."""
    repairs_skipped: list[SkippedRepair] = []
    """Extension: candidates past the repair budget."""
    repair: RepairOverview | None = None
    """Extension: the repair run's budget, test family and headline; absent without ``--repair``."""
    basis: VerdictBasis | None = None
    """Extension: the deciding finding, whether the verdict is controlled, whether the model is a stand-in."""

    def to_dict(self) -> dict[str, Any]:
        data = msgspec.to_builtins(self)
        if data.get("sampling") is None:
            data.pop("sampling", None)
        if data.get("repair") is None:  # not asked for: the report keeps its section-3 shape
            for key in ("repairs", "repairs_skipped", "repair"):
                data.pop(key, None)
        return data

    def to_json(self, indent: int = 2) -> str:
        return msgspec.json.format(msgspec.json.encode(self.to_dict()), indent=indent).decode()


def read_report(data: bytes | str | dict[str, Any]) -> Report:
    """A stored report (its JSON text, or that text parsed) as a :class:`Report`.

    The one way back from a report's JSON (run directories, ``--baseline`` files, the
    service's database). Parsed with :func:`json.loads`, which reads what ``json.dumps``
    writes (``NaN`` included). A report written before a field existed gets the field's
    struct default; anything that is not a report raises :class:`msgspec.ValidationError`
    naming the field.
    """
    if isinstance(data, (bytes, str)):
        data = json.loads(data)
    return msgspec.convert(data, Report)


def verdict_of(findings: list[Finding]) -> Verdict:
    severities = {f.severity for f in findings}
    if "fail" in severities:
        return "fail"
    return "warn" if "warn" in severities else "ok"


def deciding_finding(findings: list[Finding]) -> Finding | None:
    """The finding that set the verdict: the first (in checklist order) of the worst severity
    above ``info``; None when the verdict is ok."""
    worst = max((SEVERITY_RANK[f.severity] for f in findings), default=0)
    return next((f for f in findings if SEVERITY_RANK[f.severity] == worst), None) if worst else None


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` via a temp file in the same directory, then rename.

    A failure leaves no partial file behind (contract section 2).
    """
    write_all_atomic({Path(path): text})


def write_all_atomic(outputs: dict[Path, str]) -> None:
    """Write several files all-or-nothing: every temp file first, then the renames.

    If any write fails, no target is touched and the temp files are removed.
    """
    staged: list[tuple[str, Path]] = []
    mode = 0o666 & ~_umask()  # mkstemp makes 0600 files; outputs get the usual permissions
    try:
        for path, text in outputs.items():
            target = Path(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            staged.append((tmp, target))
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.chmod(tmp, mode)
        for tmp, target in staged:
            os.replace(tmp, target)
    except BaseException:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
