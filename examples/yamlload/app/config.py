"""Configuration loading (an example repository for the yaml-safe-load task class)."""

import yaml


def load_config(path):
    with open(path) as handle:
        return yaml.load(handle)


def load_trusted(path):
    # a Loader is passed: the caller chose it, the recipe leaves it alone
    with open(path) as handle:
        return yaml.load(handle, Loader=yaml.FullLoader)


def load_documents(text):
    return list(yaml.load_all(text))


def load_keyword(text):
    return yaml.load(stream=text)


def load_positional(text):
    return yaml.load(text, yaml.SafeLoader)
