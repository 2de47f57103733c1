"""Imports point one way: the engine never pulls in web or database code."""

from __future__ import annotations

import subprocess
import sys

import pytest

ENGINE_MODULES = [
    "diagnose", "diagnose.cli", "diagnose.pipeline", "diagnose.inputs", "diagnose.sampling.stage",
    "diagnose.triage", "diagnose.html", "diagnose.models", "diagnose.case_file",
]
FORBIDDEN = ("litestar", "sqlalchemy", "alembic", "api")
HEAVY = ("faiss", "torch", "transformers", "sentence_transformers")


def test_engine_imports_no_web_or_database_code():
    code = (
        "import importlib, sys\n"
        f"for m in {ENGINE_MODULES!r}: importlib.import_module(m)\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r})\n"
        "print(','.join(bad))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_public_api_names():
    import diagnose

    from diagnose import Case, diagnose_case, diagnose_inputs  # noqa: F401  (contract section 5)

    assert callable(diagnose_inputs) and callable(diagnose_case)
    for name in diagnose.__all__:
        assert getattr(diagnose, name) is not None


def test_no_import_cycles():
    """Every module of the engine and the service can be read without its importers.

    grimp (import-linter's graph) sees function-level imports too, so a cycle
    hidden behind a deferred import still counts; TYPE_CHECKING imports do not.
    """
    import grimp

    graph = grimp.build_graph("diagnose", "api", exclude_type_checking_imports=True, cache_dir=None)
    cycles = sorted(
        " -> ".join((module, *graph.find_shortest_chain(importer=imported, imported=module)))
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if graph.chain_exists(importer=imported, imported=module)
    )
    assert cycles == []


def test_only_the_service_commands_import_the_service():
    """``diagnose serve`` / ``worker`` start the service, so ``diagnose.cli_service`` imports
    ``api`` (inside its commands); no other engine module may, even through a chain."""
    import grimp

    graph = grimp.build_graph("diagnose", "api", exclude_type_checking_imports=True, cache_dir=None)
    graph.remove_module("diagnose.cli_service")
    assert graph.find_shortest_chains(importer="diagnose", imported="api") == set()


@pytest.mark.parametrize("importer", ["diagnose.sampling", "diagnose.models"])
def test_the_input_stage_is_imported_by_no_lower_layer(importer):
    """The sampling stage and the model registry read the input stage's hand-off
    (``diagnose.analysis``) and the embedder (``diagnose.embedding``), both below the
    stages; neither may reach ``diagnose.inputs``, even through a chain."""
    import grimp

    graph = grimp.build_graph("diagnose", "api", exclude_type_checking_imports=True, cache_dir=None)
    assert graph.find_shortest_chains(importer=importer, imported="diagnose.inputs") == set()


def test_importing_settings_loads_no_model_library():
    """``Settings`` is built at every edge (CLI, ``create_app``), so its dataclasses must
    not pull in the stages' model and index libraries."""
    code = (
        "import sys\n"
        "import diagnose.settings\n"
        f"print(','.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_each_package_exports_what_its_all_names_and_no_shim_remains():
    """The public API is pinned by ``__all__`` (as httpx pins its own): every listed name
    resolves, and the moved hand-off types are imported from where they live, not from shims."""
    import importlib

    for name in ("diagnose", "diagnose.inputs", "diagnose.models", "diagnose.nightly", "diagnose.triage"):
        module = importlib.import_module(name)
        assert all(getattr(module, member, None) is not None for member in module.__all__), name
    assert importlib.import_module("diagnose.inputs").__all__ == ["InputSettings", "analyze_inputs"]
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("diagnose.inputs.embed")


LAYERS = (
    ("diagnose.__main__", "diagnose.cli", "diagnose.cli_service", "diagnose.console", "diagnose.pytest_plugin",
     "diagnose.bench"),
    ("diagnose.pipeline", "diagnose.settings"),
    ("diagnose.repair", "diagnose.nightly", "diagnose.adapters"),
    ("diagnose.html", "diagnose.verdict_lines"),
    ("diagnose.triage",),
    ("diagnose.inputs", "diagnose.sampling"),
    ("diagnose.decode", "diagnose.models", "diagnose.reader", "diagnose.embedding", "diagnose.analysis",
     "diagnose.environment"),
    ("diagnose.case", "diagnose.document", "diagnose.report", "diagnose.prompt", "diagnose.case_file"),
    ("diagnose.text", "diagnose.stats", "diagnose.display", "diagnose.progress", "diagnose.errors", "diagnose._lazy"),
)
"""The engine's layers, top first: a module imports only from its own layer or the ones below.

The edges (CLI, benches, pytest plugin) sit on the pipeline, which wires the stages and
builds the settings (every group of which lives beside the code that reads it); repairs,
the nightly gate and the LangChain adapter use the stages through triage; the two stages
(independent of each other) sit on the decode engine, the model registry, the embedder and
the input stage's hand-off; below them the case, document and report types; at the bottom
text facts, statistics and errors, which import nothing of the engine."""


def test_the_engine_keeps_its_layers():
    import grimp

    graph = grimp.build_graph("diagnose", exclude_type_checking_imports=True, cache_dir=None)
    every = {module for layer in LAYERS for module in layer}
    top_level = {m for m in graph.modules if m.count(".") == 1}
    assert top_level <= every, f"modules in no layer: {sorted(top_level - every)}"
    layers = [grimp.Layer(*modules, independent=modules == ("diagnose.inputs", "diagnose.sampling"))
              for modules in LAYERS]
    illegal = graph.find_illegal_dependencies_for_layers(layers=layers, containers=set())
    found = sorted(f"{d.importer} -> {d.imported} via "
                   + ", ".join(sorted(f"{min(r.heads)} -> {min(r.tails)}" for r in d.routes))
                   for d in illegal)
    assert found == []
