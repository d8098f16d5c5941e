"""The TOML configuration file: server settings, admins by key fingerprint, clear errors with
the line, and `perudo-ssh admin add|remove|list` editing it (issue 4, item 6)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from perudo_ssh.cli import main
from perudo_ssh.cli_args import build_parser, serve_settings
from perudo_ssh.config import (
    Config,
    ConfigError,
    ServerSettings,
    add_admin,
    is_admin,
    is_fingerprint,
    load_config,
    parse_config,
    remove_admin,
)

ANA_KEY = "SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU"
ANA_LAPTOP = "SHA256:" + "a" * 43
BEN_KEY = "SHA256:" + "B" * 42 + "0"

CONFIG = f"""\
# our club's server
[server]
listen = "0.0.0.0"   # every interface
port = 2022
host_keys = "keys"
db = "/var/lib/perudo/perudo.db"

[admins]
"{ANA_KEY}" = "ana"
"""


def accounts(name: str) -> list[str]:
    """A stand-in for the player database: ana logs in with two keys, ben with one."""
    return {"ana": [ANA_KEY, ANA_LAPTOP], "ben": [BEN_KEY]}.get(name, [])


def test_a_missing_file_is_the_empty_configuration(tmp_path: Path) -> None:
    config = load_config(tmp_path / "perudo.toml")
    assert config == Config()
    assert config.server == ServerSettings()
    assert is_admin(config, ANA_KEY) is False


def test_a_full_file(tmp_path: Path) -> None:
    path = tmp_path / "perudo.toml"
    path.write_text(CONFIG)
    config = load_config(path)
    assert config.server == ServerSettings(
        listen="0.0.0.0",
        port=2022,
        host_keys=tmp_path / "keys",
        db=Path("/var/lib/perudo/perudo.db"),
    )
    assert dict(config.admins) == {ANA_KEY: "ana"}
    assert is_admin(config, ANA_KEY) is True
    assert is_admin(config, BEN_KEY) is False
    assert is_admin(config, None) is False  # a guest


def test_fingerprints_are_openssh_sha256() -> None:
    assert is_fingerprint(ANA_KEY) and is_fingerprint(BEN_KEY)
    assert not is_fingerprint("ana")
    assert not is_fingerprint(ANA_KEY[:-1])
    assert not is_fingerprint("MD5:" + ANA_KEY[7:])
    assert not is_fingerprint(ANA_KEY + "=")


PORT = "port must be a whole number from 0 to 65535, not "
UNKNOWN = "unknown table or setting {!r} (known: [server], [admins], [limits])"


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('[server]\nport = "2222"\n', 2, PORT + "'2222'"),
        ("[server]\nport = 70000\n", 2, PORT + "70000"),
        ("[server]\nport = true\n", 2, PORT + "True"),
        ('# x\n[server]\nlisten = "a"\nprot = 2\n', 4,
         "unknown setting 'prot' (known: listen, port, host_keys, db, name, banner, motd)"),
        ('[server]\nhost_keys = ""\n', 2, "host_keys must be a non-empty string, not ''"),
        ("\n[admin]\n", 2, UNKNOWN.format("admin")),
        ("port = 2222\n", 1, UNKNOWN.format("port")),
        ("server = 1\n", 1, "server must be a table: [server]"),
        ('[admins]\nana = "SHA256:x"\n', 2,
         "'ana' is not a key fingerprint (SHA256: and 43 characters)"),
        (f'[admins]\n\n"{ANA_KEY}" = 1\n', 3, f"the label of {ANA_KEY} must be a string, not 1"),
    ],
)  # fmt: skip
def test_a_malformed_file_is_refused_naming_the_line(text: str, line: int, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, Path("p.toml"))
    assert str(caught.value) == f"p.toml, line {line}: {message}"


def test_toml_syntax_errors_give_tomllibs_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "perudo.toml"
    path.write_text('[server]\nlisten = "a\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: not valid TOML: ")
    assert str(caught.value).endswith("(at line 2, column 12)")


def test_an_unreadable_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read it: Is a directory"):
        load_config(tmp_path)
    (tmp_path / "latin1.toml").write_bytes(b"# caf\xe9\n")
    with pytest.raises(ConfigError, match=r"latin1.toml: cannot read it: not UTF-8 text"):
        load_config(tmp_path / "latin1.toml")


def test_adding_a_fingerprint_creates_the_file(tmp_path: Path) -> None:
    path = tmp_path / "perudo.toml"
    assert add_admin(path, BEN_KEY) == [BEN_KEY]
    assert dict(load_config(path).admins) == {BEN_KEY: ""}
    assert path.stat().st_mode & 0o777 == 0o644
    assert add_admin(path, BEN_KEY) == []  # already there: nothing changes


def test_adding_a_name_adds_all_its_keys_and_keeps_the_files_comments(tmp_path: Path) -> None:
    path = tmp_path / "perudo.toml"
    path.write_text(CONFIG)
    path.chmod(0o600)
    assert add_admin(path, "ana", accounts) == [ANA_LAPTOP]  # ANA_KEY is already there
    assert add_admin(path, "ben", accounts) == [BEN_KEY]
    text = path.read_text()
    assert text.startswith(CONFIG)  # comments, layout and the other settings untouched
    assert text[len(CONFIG) :] == f'"{ANA_LAPTOP}" = "ana"\n"{BEN_KEY}" = "ben"\n'
    assert path.stat().st_mode & 0o777 == 0o600
    assert dict(load_config(path).admins) == {ANA_KEY: "ana", ANA_LAPTOP: "ana", BEN_KEY: "ben"}


def test_adding_refuses_unknown_names_and_bad_fingerprints(tmp_path: Path) -> None:
    path = tmp_path / "perudo.toml"
    with pytest.raises(ConfigError, match="no player named 'zoe' has logged in with a key"):
        add_admin(path, "zoe", accounts)
    with pytest.raises(ConfigError, match="no player database to look up"):
        add_admin(path, "ana")
    with pytest.raises(ConfigError, match="'SHA256:abc' is not a key fingerprint"):
        add_admin(path, "SHA256:abc", accounts)
    assert not path.exists()


def test_a_malformed_file_is_not_edited(tmp_path: Path) -> None:
    path = tmp_path / "perudo.toml"
    path.write_text("[server]\nport = -1\n")
    with pytest.raises(ConfigError, match="line 2: port"):
        add_admin(path, ANA_KEY)
    with pytest.raises(ConfigError, match="line 2: port"):
        remove_admin(path, ANA_KEY)
    assert path.read_text() == "[server]\nport = -1\n"


def test_removing_by_fingerprint_by_label_and_by_account(tmp_path: Path) -> None:
    path = tmp_path / "perudo.toml"
    path.write_text(CONFIG)
    add_admin(path, "ana", accounts)
    add_admin(path, BEN_KEY)  # unlabelled
    assert remove_admin(path, ANA_LAPTOP) == [ANA_LAPTOP]
    assert remove_admin(path, ANA_LAPTOP) == []
    assert remove_admin(path, "ana") == [ANA_KEY]  # by its label, without the database
    assert remove_admin(path, "ben", accounts) == [BEN_KEY]  # by the account's keys
    assert remove_admin(path, "nobody", accounts) == []
    assert load_config(path).admins == {}
    assert path.read_text() == CONFIG.replace(f'"{ANA_KEY}" = "ana"\n', "")


# ---- the command line -----------------------------------------------------------------------


def test_admin_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "perudo.toml")
    assert main(["admin", "list", "--config", path]) == 0
    assert capsys.readouterr().err == f"no admins in {path}\n"

    assert main(["admin", "add", ANA_KEY, "--config", path]) == 0
    assert capsys.readouterr().out == f"added admin {ANA_KEY} to {path}\n"  # named once
    assert main(["admin", "add", ANA_KEY, "--config", path]) == 0
    assert capsys.readouterr().out == f"{ANA_KEY} is already an admin in {path}\n"
    assert main(["admin", "add", BEN_KEY, "--config", path]) == 0
    capsys.readouterr()

    assert main(["admin", "list", "--config", path]) == 0
    assert capsys.readouterr().out == f"{ANA_KEY}\n{BEN_KEY}\n"

    assert main(["admin", "remove", ANA_KEY, "--config", path]) == 0
    assert capsys.readouterr().out == f"removed admin {ANA_KEY} from {path}\n"
    assert main(["admin", "remove", ANA_KEY, "--config", path]) == 1
    assert capsys.readouterr().err == f"perudo-ssh admin: {ANA_KEY} is not an admin in {path}\n"
    assert dict(load_config(Path(path)).admins) == {BEN_KEY: ""}


def test_admin_command_errors_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "perudo.toml"
    assert main(["admin", "add", "SHA256:nope", "--config", str(path)]) == 2
    assert capsys.readouterr().err == (
        "perudo-ssh admin: 'SHA256:nope' is not a key fingerprint (SHA256: and 43 characters)\n"
    )
    path.write_text("[server\n")
    assert main(["admin", "list", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"perudo-ssh admin: {path}: not valid TOML: ") and err.count("\n") == 1


def test_serve_takes_flags_over_the_file_over_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "perudo.toml"
    path.write_text(CONFIG)
    parse = build_parser().parse_args
    settings = serve_settings(parse(["serve", "--config", str(path), "--port", "0"]))
    assert settings.listen == "0.0.0.0" and settings.port == 0
    assert settings.host_keys == tmp_path / "keys"
    assert settings.db == Path("/var/lib/perudo/perudo.db")
    defaults = serve_settings(parse(["serve", "--config", str(tmp_path / "none.toml")]))
    assert defaults[:3] == ("127.0.0.1", 2222, Path("host_keys"))
    flags = ["--listen", "::1", "--host-keys", "hk", "--config", str(path)]
    assert serve_settings(parse(["serve", *flags]))[:3] == ("::1", 2022, Path("hk"))


def test_serve_refuses_a_malformed_config_before_starting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "perudo.toml"
    path.write_text("[server]\nport = 'x'\n")
    assert main(["serve", "--config", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"perudo-ssh serve: {path}, line 2: port must be a whole number from 0 to 65535, not 'x'\n"
    )


def make_database(path: Path) -> None:
    """A player database where ana signs in with two keys and ben with one."""
    from perudo_ssh.store import Store

    async def fill() -> None:
        store = await Store.open(path)
        try:
            ana = (await store.claim_key(ANA_KEY, "ana")).account
            await store.link_key(await store.new_link_code(ana.id), ANA_LAPTOP)
            await store.claim_key(BEN_KEY, "ben")
        finally:
            await store.close()

    asyncio.run(fill())


def test_admin_names_are_looked_up_in_the_player_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, config = tmp_path / "players.db", str(tmp_path / "perudo.toml")
    make_database(db)
    assert main(["admin", "add", "ANA", "--config", config, "--db", str(db)]) == 0  # any case
    assert capsys.readouterr().out == (
        f"added admin {ANA_KEY} (ANA) to {config}\nadded admin {ANA_LAPTOP} (ANA) to {config}\n"
    )
    assert main(["admin", "add", "zoe", "--config", config, "--db", str(db)]) == 2
    assert capsys.readouterr().err == (
        "perudo-ssh admin: no player named 'zoe' has logged in with a key\n"
    )
    missing = tmp_path / "none.db"
    assert main(["admin", "add", "ben", "--config", config, "--db", str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"perudo-ssh admin: no player database {missing} to look 'ben' up in\n"
    )
    assert not missing.exists()  # never created by a look-up
    # without a database, remove goes by the labels
    assert main(["admin", "remove", "ANA", "--config", config, "--db", str(missing)]) == 0
    assert capsys.readouterr().out == (
        f"removed admin {ANA_KEY} from {config}\nremoved admin {ANA_LAPTOP} from {config}\n"
    )


def test_the_config_files_database_is_used_without_db(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_database(tmp_path / "players.db")
    config = tmp_path / "perudo.toml"
    config.write_text('[server]\ndb = "players.db"\n')  # beside the config file
    assert main(["admin", "add", "ben", "--config", str(config)]) == 0
    assert capsys.readouterr().out == f"added admin {BEN_KEY} (ben) to {config}\n"
    assert dict(load_config(config).admins) == {BEN_KEY: "ben"}
