"""The range policy shared by every manifest format: fixed, loose, edited (and how), unsupported."""

from __future__ import annotations

import pytest

from subgraphs.vulnerability_remediation.ranges import bump, require, shorten


@pytest.mark.parametrize(("spec", "target", "flavor", "status", "text"), [
    # PEP 440
    ("==2.30.0", "2.31.0", "pep440", "edited", "==2.31.0"),
    ("===2.30.0", "2.31.0", "pep440", "edited", "===2.31.0"),
    (">=2.2,<3", "2.31.0", "pep440", "edited", ">=2.31.0,<3"),
    (">2.2, <2.31", "2.31.0", "pep440", "edited", ">=2.31.0, <2.32"),
    (">=2.0,<=2.30", "2.31.0", "pep440", "edited", ">=2.31.0,<=2.31.0"),
    ("~=2.30", "2.31.0", "pep440", "edited", "~=2.31"),
    ("~=2.30", "2.31.1", "pep440", "edited", ">=2.31.1,==2.*"),
    ("~=2.30.0", "2.31.0", "pep440", "edited", "~=2.31.0"),
    ("!=2.31.0,>=2.0", "2.31.0", "pep440", "edited", ">=2.31.0"),
    (">=2.0,!=2.31.*", "2.31.0", "pep440", "edited", ">=2.31.0"),
    ("==2.30.*", "2.30.5", "pep440", "edited", ">=2.30.5,==2.30.*"),
    ("==2.30.*", "2.31.0", "pep440", "edited", ">=2.31.0,==2.31.*"),
    ("<2.31", "2.31.0", "pep440", "edited", ">=2.31.0,<2.32"),  # a floor: nothing below the fix
    ("!=2.31.0", "2.31.0", "pep440", "edited", ">=2.31.0"),
    ("!=2.30.0", "2.31.0", "pep440", "loose", "!=2.30.0"),
    ("<3", "2.31.0", "pep440", "loose", "<3"),
    ("", "2.31.0", "pep440", "loose", ""),
    (">=2.31.0", "2.31.0", "pep440", "fixed", ">=2.31.0"),
    ("==2.32", "2.31.0", "pep440", "fixed", "==2.32"),
    (">2.31.0,<3", "2.31.0", "pep440", "fixed", ">2.31.0,<3"),
    ("==2.31", "2.31.0", "pep440", "fixed", "==2.31"),
    # Poetry
    ("^2.30.0", "2.31.0", "poetry", "edited", "^2.31.0"),
    ("^2.30", "2.31.0", "poetry", "edited", "^2.31"),
    ("^2", "2.31.0", "poetry", "edited", "^2.31.0"),
    ("^2.30.0", "3.0.1", "poetry", "edited", "^3.0.1"),
    ("~2.30.0", "2.31.0", "poetry", "edited", "~2.31.0"),
    ("2.30.0", "2.31.0", "poetry", "edited", "2.31.0"),
    ("==2.30.0", "2.31.0", "poetry", "edited", "==2.31.0"),
    (">=2.0 <2.31", "2.31.0", "poetry", "edited", ">=2.31.0 <2.32"),
    (">= 2.0, < 3.0", "3.1.0", "poetry", "edited", ">= 3.1.0, < 4.0"),
    ("2.30.*", "2.31.0", "poetry", "edited", "~2.31.0"),
    ("2.*", "2.31.0", "poetry", "edited", "^2.31.0"),
    ("*", "2.31.0", "poetry", "loose", "*"),
    ("^2.31.0", "2.31.0", "poetry", "fixed", "^2.31.0"),
    # npm
    ("4.17.20", "4.17.21", "npm", "edited", "4.17.21"),
    ("=4.17.20", "4.17.21", "npm", "edited", "=4.17.21"),
    ("v4.17.20", "4.17.21", "npm", "edited", "v4.17.21"),
    ("^4.17.20", "4.17.21", "npm", "edited", "^4.17.21"),
    ("~4.17.20", "4.17.21", "npm", "edited", "~4.17.21"),
    ("^0.2.3", "0.3.1", "npm", "edited", "^0.3.1"),
    (">=1 <2", "1.5.0", "npm", "edited", ">=1.5.0 <2"),
    (">=1.0.0 <2.0.0", "2.1.0", "npm", "edited", ">=2.1.0 <3.0.0"),
    (">= 1.2.0", "1.3.0", "npm", "edited", ">= 1.3.0"),
    ("4.17.x", "4.17.21", "npm", "edited", "~4.17.21"),
    ("4.x", "4.17.21", "npm", "edited", "^4.17.21"),
    ("0.x", "0.5.1", "npm", "edited", ">=0.5.1 <1.0.0"),
    ("4.17", "4.17.21", "npm", "edited", "~4.17.21"),
    ("1.2.3 - 2.3.4", "2.4.0", "npm", "edited", "2.4.0 - 2.4.0"),
    ("1.2.3 - 2.3.4", "2.0.0", "npm", "edited", "2.0.0 - 2.3.4"),
    ("<=4", "4.9.0", "npm", "loose", "<=4"),
    ("x", "1.0.0", "npm", "loose", "x"),
    ("*", "1.0.0", "npm", "loose", "*"),
    ("", "1.0.0", "npm", "loose", ""),
    ("^4.17.21", "4.17.21", "npm", "fixed", "^4.17.21"),
    ("^5.0.0", "4.17.21", "npm", "fixed", "^5.0.0"),
    # not rewritten
    ("^1.0 || ^2.0", "2.31.0", "poetry", "unsupported", "^1.0 || ^2.0"),
    ("^3.0.0 || ^4.0.0", "4.1.0", "npm", "unsupported", "^3.0.0 || ^4.0.0"),
    ("latest", "1.0.0", "npm", "unsupported", "latest"),
    ("=>2.0", "2.31.0", "pep440", "unsupported", "=>2.0"),
])
def test_require(spec: str, target: str, flavor: str, status: str, text: str) -> None:
    result = require(spec, target, flavor)  # type: ignore[arg-type]
    assert (result.status, result.text) == (status, text)
    assert result.reasons  # every outcome says why


def test_reasons_name_each_change() -> None:
    result = require(">=2.0,!=2.31.0,<2.31", "2.31.0", "pep440")
    assert result.text == ">=2.31.0,<2.32"
    assert result.reasons == ["`>=2.0` → `>=2.31.0`", "dropped `!=2.31.0`, which excluded 2.31.0",
                              "upper bound `<2.31` excluded 2.31.0; moved to `<2.32`"]
    assert require("^1.2.0", "2.0.1", "npm").reasons == [
        "`^1.2.0` → `^2.0.1`; 2.0.1 was outside `^1.2.0`, so its upper bound moves too"]


def test_helpers() -> None:
    assert bump([2, 30, 1], 1) == [2, 31, 0]
    assert bump([3], 2) == [3, 0, 1]
    assert shorten("2.31.0", 2) == "2.31"
    assert shorten("2.31.1", 2) is None
    assert shorten("3", 3) == "3.0.0"
    assert shorten("3.0.0rc1", 2) is None


@pytest.mark.parametrize(("spec", "flavor"), [(">=2.8.0,<5.0.0", "pep440"), ("~=4.5.0", "pep440"),
                                              ("^4.5.0", "poetry"), ("^4.5.0", "npm"), (">=2.8 <5", "npm")])
def test_a_range_that_allows_the_target_beside_a_pin_is_left_as_written(spec: str, flavor: str) -> None:
    result = require(spec, "4.5.4", flavor, pinned_by="requirements/main.txt")  # type: ignore[arg-type]
    assert (result.status, result.text) == ("loose", spec)
    assert "pinned in requirements/main.txt" in result.reasons[0]
    assert require("==4.5.3", "4.5.4", "pep440", pinned_by="x.txt").status == "edited"  # a pin is not a range
