"""diagnose.document: foreign documents become ours, keeping their date and authority.

Every document here is made up for these tests."""

from __future__ import annotations

import datetime

import pytest
from langchain_core.documents import Document as LCDocument

from diagnose.document import Document, to_documents

D = datetime.date


def test_renumbered_chunks_of_one_source_keep_every_field():
    chunks = [LCDocument(page_content=f"part {i}", metadata={"source": "handbook.pdf", "score": 0.5,
                                                              "date": "2024-05-0" + str(i + 1),
                                                              "authority": "authoritative"})
              for i in range(3)]
    docs = to_documents(chunks)
    assert [d.id for d in docs] == ["handbook.pdf", "handbook.pdf#2", "handbook.pdf#3"]
    assert [d.date for d in docs] == [D(2024, 5, 1), D(2024, 5, 2), D(2024, 5, 3)]
    assert all(d.authority == "authoritative" and d.score == 0.5 and d.source == "handbook.pdf" for d in docs)


@pytest.mark.parametrize(("metadata", "date", "authority"), [
    ({"date": "2026-02-01T09:30:00Z"}, D(2026, 2, 1), None),
    ({"date": datetime.datetime(2025, 7, 4, 12, 0)}, D(2025, 7, 4), None),
    ({"effective_date": "1 March 2023", "last_updated": "2024-06-05"}, D(2024, 6, 5), None),
    ({"date": "2022-01-01", "last_updated": "2024-06-05"}, D(2022, 1, 1), None),
    ({"published": "2026年2月1日", "status": "archived"}, D(2026, 2, 1), "archived"),
    ({"status": "Superseded"}, None, "archived"),
    ({"status": "已废止"}, None, "archived"),
    ({"status": "abrogé"}, None, "archived"),
    ({"authority": "authoritative", "status": "active"}, None, "authoritative"),
    ({"status": "active", "date": "sometime soon"}, None, None),
])
def test_langchain_metadata_gives_the_date_and_authority(metadata, date, authority):
    doc = to_documents([LCDocument(page_content="Desks are booked a day ahead.", metadata=metadata)])[0]
    assert (doc.date, doc.authority) == (date, authority)


def test_our_own_documents_pass_through_unchanged():
    ours = Document(id="x", text="t", date=D(2020, 1, 1), authority="archived")
    assert to_documents([ours]) == [ours]
