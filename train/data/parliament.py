"""What is parliament's alone in the Canadian Hansard, and a cleaning that takes it out.

The Hansard (../shared/data/hansard, 927,788 English-French pairs of debates) is general French in
a parliament's frame: a speech opens by addressing the chair ("Mr. Speaker, ..." / "Monsieur le
Président, ..."), speakers are "the hon. member for ..." / "le député de ...", and procedure has
its own formulas ("I move that ...", "pursuant to Standing Order 31"). Fed as is, a model learns to
say "député" for any "member" and to open sentences with "Monsieur le Président" (issue #61's first
try). The cleaning:

- strips the opening address to the chair when both sides have it (the rest of the sentence is
  ordinary French), and drops a pair where only one side has it (the two no longer match);
- drops a pair whose English speaks of the House's people or procedure (Speaker, hon. member,
  senators, Standing Orders, motions, petitions, bills by number) or whose French names them
  (député, honorable, sénateur, Président, la Chambre).

The register words of the count in train/studies/leakage.py (REGISTER) are among those dropped.
"""

from __future__ import annotations

import re

ADDRESS_EN = re.compile(
    r"^(?:(?:Mr\.|Madam|Mister) (?:Deputy |Acting )?Speaker|(?:Honourable|Hon\.) senators"
    r"|Mr\. Chairman|Madam Chair(?:man)?)\s*,\s*"
)
ADDRESS_FR = re.compile(
    r"^(?:(?:Monsieur|Madame) (?:le |la )?(?:vice-)?Présidente?(?: suppléante?)?"
    r"|Honorables sénateurs)\s*,\s*",
    re.IGNORECASE,
)
PARLIAMENT_EN = re.compile(
    r"\b(?:Speaker|hon\.|honourable|members?|senators?|Senate|House of Commons|Standing Orders?"
    r"|Order Paper|Routine Proceedings|unanimous consent|pursuant to|seconded by|I move"
    r"|petition(?:s|ers)?|motions?|Bill [CS]-\d+)\b",
    re.IGNORECASE,
)
PARLIAMENT_FR = re.compile(
    r"\b(?:députée?s?|honorables?|sénat(?:eur|rice)s?|Sénat|Présidente?|Chambre)\b",
    re.IGNORECASE,
)


def without_address(english: str, french: str) -> tuple[str, str] | None:
    """The pair without its opening address to the chair (the next word capitalised), the pair
    itself when neither side has one, None when only one side has it."""
    in_english, in_french = ADDRESS_EN.match(english), ADDRESS_FR.match(french)
    if not in_english and not in_french:
        return english, french
    if not (in_english and in_french):
        return None
    english, french = english[in_english.end() :], french[in_french.end() :]
    return english[:1].upper() + english[1:], french[:1].upper() + french[1:]


def parliament_cleaned(pairs: list[list[str]]) -> list[list[str]]:
    """The (English, French) pairs with what is parliament's alone taken out (module docstring)."""
    kept = []
    for english, french in pairs:
        stripped = without_address(english, french)
        if stripped is None or not stripped[0] or not stripped[1]:
            continue
        if PARLIAMENT_EN.search(stripped[0]) or PARLIAMENT_FR.search(stripped[1]):
            continue
        kept.append(list(stripped))
    return kept
