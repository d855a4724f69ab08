"""Loads the product catalogue and prices it through the pricing API."""

import requests
import yaml

PRICING_URL = "https://pricing.internal.example/v1/price"


def load_catalog(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return yaml.full_load(handle)["products"]


def price(sku: str) -> float:
    response = requests.get(PRICING_URL, params={"sku": sku}, timeout=5)
    response.raise_for_status()
    return float(response.json()["price"])
