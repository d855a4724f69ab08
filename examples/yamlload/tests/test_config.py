from app.config import load_documents, load_keyword


def test_documents():
    assert load_documents("a: 1\n---\nb: 2\n") == [{"a": 1}, {"b": 2}]


def test_keyword():
    assert load_keyword("x: [1, 2]") == {"x": [1, 2]}
