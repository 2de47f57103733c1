"""Schemathesis, stateful: sequences of calls that follow the links between operations.

The stateless run (test_fuzz.py) cannot guess ids, so a diagnosis or a nightly run
it did not create is always a 404. Here schemathesis chains operations through the
links it infers from the typed responses and path parameters (``POST /v1/diagnoses``
→ ``GET``/``DELETE /v1/diagnoses/{diagnosis_id}`` and its reports, ``POST
/v1/nightly-runs`` → ``GET /v1/nightly-runs/{run_id}`` and its outputs), and every
answer of every step must still be what the OpenAPI document promises. Same
in-process app and checks as the stateless run; bounded and derandomized.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

from tests.api.test_fuzz import CHECKS, schema

pytestmark = pytest.mark.fuzz

LINKED = {
    "POST /v1/diagnoses": {"GET /v1/diagnoses/{diagnosis_id}", "DELETE /v1/diagnoses/{diagnosis_id}"},
    "POST /v1/nightly-runs": {"GET /v1/nightly-runs/{run_id}"},
}
"""Transitions the document must let a client (and the fuzzer) follow."""


def _transitions() -> dict[str, set[str]]:
    from schemathesis.specs.openapi.stateful import collect_transitions

    schema.as_state_machine()  # injects the inferred links into the schema
    operations = [result.ok() for result in schema.get_all_operations()]
    found: dict[str, set[str]] = {}
    for label, entry in collect_transitions(operations).operations.items():
        for link in entry.incoming:
            found.setdefault(link.source.label, set()).add(label)
    return found


def test_the_document_links_creations_to_their_resources():
    found = _transitions()
    for source, targets in LINKED.items():
        assert targets <= found.get(source, set()), (source, found.get(source))


class ServiceStateMachine(schema.as_state_machine()):
    def validate_response(self, response, case, additional_checks=None, **kwargs):
        case.validate_response(response, checks=CHECKS)


def test_call_sequences_answer_as_documented():
    ServiceStateMachine.run(settings=settings(
        max_examples=25, stateful_step_count=6, derandomize=True, deadline=None, database=None,
        suppress_health_check=list(HealthCheck)))
