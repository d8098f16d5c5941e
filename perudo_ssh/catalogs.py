"""Rebuild the gettext catalogs: extract, update the fr/ru `.po` files, compile `.mo`.

Run `python -m perudo_ssh.catalogs` from the repository root after changing any message
(needs Babel, in the `dev` and `test` extras). The compiled `.mo` files are committed, so an
install needs no Babel; tests/test_catalogs.py fails when they are stale.
"""

from __future__ import annotations

import sys

from perudo_ssh.i18n import DOMAIN, LANGUAGES, LOCALE_DIR

KEYWORDS = ("_", "n_:1,2", "p_:1c,2", "np_:1c,2,3", "N_")
"""The translation calls of perudo_ssh.i18n, as Babel keyword specs."""
POT = LOCALE_DIR / f"{DOMAIN}.pot"


def main() -> int:
    """Extract to `perudo.pot`, update every `.po`, compile every `.mo`; 0 on success."""
    from babel.messages.frontend import CommandLineInterface

    def run(*args: str) -> None:
        CommandLineInterface().run(["pybabel", "-q", *args])

    POT.parent.mkdir(parents=True, exist_ok=True)
    keywords = [f"-k{k}" for k in KEYWORDS]
    run("extract", "-F", "babel.cfg", "--no-location", "--sort-output", "--no-default-keywords",
        *keywords, "--project=perudo-ssh", "-o", str(POT), "perudo_ssh", "screens")  # fmt: skip
    for code in LANGUAGES[1:]:
        po = LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.po"
        if po.exists():
            run("update", "--no-fuzzy-matching", "--ignore-obsolete", "-D", DOMAIN,
                "-i", str(POT), "-d", str(LOCALE_DIR), "-l", code)  # fmt: skip
        else:
            run("init", "-D", DOMAIN, "-i", str(POT), "-d", str(LOCALE_DIR), "-l", code)
        run("compile", "-D", DOMAIN, "-d", str(LOCALE_DIR), "-l", code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
