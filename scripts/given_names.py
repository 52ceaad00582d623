"""Write src/agentmem/data/given_names.txt: the first names of people that Faker lists per
locale, in Latin script, lower case, one per line.

Faker (MIT) is no dependency of agentmem; install it anywhere and run, from the repo root:

    python -m pip install --target /tmp/faker faker==40.63.0
    PYTHONPATH=/tmp/faker python scripts/given_names.py

Left out: names of fewer than three letters ("Al", "Bo"); those only the bare ``en`` locale
lists, a century of rare US birth names among them "Easter", "China" and "Porsche"; and those
that are one of the frequent words of the bundled MiniLM tokenizer's vocabulary (an id below
:data:`FREQUENT`: the vocabulary runs from frequent to rare), which are English words ("Said",
"Can", "Man", "Chase") or names spaCy's model has seen often enough to label itself ("Simon").
What the list is for is the long tail spaCy does not know ("Wojciech", "Aoife", "Thandiwe").
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import unicodedata
from pathlib import Path

import faker
import faker.providers.person as person

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "agentmem"
OUT = PACKAGE / "data" / "given_names.txt"
TOKENIZER = PACKAGE / "models" / "_data" / "minilm" / "tokenizer.json"
#: Wordpieces below this id are frequent words: "chase" (5252) is, "cal" (10250) is not.
FREQUENT = 8000
ATTRIBUTES = ("first_names", "first_names_male", "first_names_female", "first_names_nonbinary")


def _latin(name: str) -> bool:
    return all(
        c in "-'" or (unicodedata.category(c).startswith("L") and ord(c) < 0x250) for c in name
    )


def main() -> None:
    locales: dict[str, set[str]] = {}
    for module in pkgutil.iter_modules(person.__path__):
        provider = getattr(
            importlib.import_module(f"{person.__name__}.{module.name}"), "Provider", None
        )
        for attribute in ATTRIBUTES:
            names = getattr(provider, attribute, None)
            if names is None or isinstance(names, property):
                continue
            for name in names:
                if name and _latin(name):
                    # "İbrahim" lower-cases to "i" and a combining dot: keep the "i" of the
                    # common spelling "Ibrahim".
                    key = name.casefold().replace("\u0307", "")
                    locales.setdefault(key, set()).add(module.name)
    vocabulary = json.loads(TOKENIZER.read_text("utf-8"))["model"]["vocab"]
    kept = sorted(
        n
        for n, where in locales.items()
        if len(n) >= 3 and where != {"en"} and vocabulary.get(n, FREQUENT) >= FREQUENT
    )
    header = (
        f"# First names of people in Latin script, lower case: {len(kept)} names from the\n"
        f"# person providers of Faker {faker.VERSION} (MIT License, Copyright (c) 2012\n"
        "# Daniele Faraglia; see NOTICE), less frequent English words: scripts/given_names.py.\n"
    )
    OUT.write_text(header + "\n".join(kept) + "\n", encoding="utf-8")
    print(f"{len(kept)} names -> {OUT}")


if __name__ == "__main__":
    main()
