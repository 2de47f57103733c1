"""Every engine error class has one HTTP mapping, and a failed job records what the answer would carry."""

from __future__ import annotations

import inspect

import pytest
from litestar import Litestar, post
from litestar.testing import TestClient

import diagnose.errors as engine_errors
from api.problems import problem_details_plugin
from api.services.errors import ENGINE_ERRORS, as_service_error, failure_record
from diagnose.errors import BackendError, CaseError, DiagnoseError, ModelError, PromptTooLarge, SettingError

ENGINE_CLASSES = [cls for _, cls in inspect.getmembers(engine_errors, inspect.isclass)
                  if issubclass(cls, DiagnoseError)]


def test_every_engine_error_class_is_mapped_by_itself_or_a_listed_base():
    for cls in ENGINE_CLASSES:
        assert any(base in ENGINE_ERRORS for base in cls.__mro__), cls


@pytest.mark.parametrize(("error", "status", "field"), [
    (CaseError("documents[1].text", "must not be empty"), 422, "documents[1].text"),
    (PromptTooLarge("documents", "the prompt would be 9 characters; at most 5 are accepted"), 413, "documents"),
    (SettingError("RAG_DIAGNOSE_X", "a number", "x"), 500, None),
    (ModelError("no such model"), 500, None),
    (BackendError("the server closed the connection"), 502, None),
])
def test_an_engine_error_answers_its_status_and_field_and_a_job_records_the_same(error, status, field):
    @post("/raise", sync_to_thread=False)
    def raise_it() -> None:
        raise error

    app = Litestar([raise_it], plugins=[problem_details_plugin()])
    with TestClient(app) as client:
        answer = client.post("/raise")
    body = answer.json()
    assert answer.status_code == status
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert body.get("field") == field and body["detail"] == str(error)
    assert failure_record(error) == {k: body[k] for k in ("title", "detail", "field") if k in body}


def test_a_subclass_not_listed_takes_its_nearest_base():
    class Unlisted(CaseError):
        pass

    assert as_service_error(Unlisted("question", "too short")).status == 422
