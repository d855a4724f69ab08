from shop import catalog


def test_load_catalog(tmp_path):
    path = tmp_path / "catalog.yaml"
    path.write_text("products:\n  - sku: A1\n    name: Mug\n")
    assert catalog.load_catalog(str(path)) == [{"sku": "A1", "name": "Mug"}]
