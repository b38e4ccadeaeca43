from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from odradek.broker.security.jaas_config import (
    ControlFlag,
    JaasConfigError,
    LoginModuleEntry,
    parse_jaas_config,
)

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"


def test_kafkas_documented_plain_broker_config_parses_to_its_options() -> None:
    (entry,) = parse_jaas_config(
        f'{PLAIN} required username="admin" password="admin-secret" '
        'user_admin="admin-secret" user_alice="alice-secret";'
    )
    assert entry.login_module == PLAIN and entry.control_flag is ControlFlag.REQUIRED
    assert dict(entry.options) == {
        "username": "admin",
        "password": "admin-secret",
        "user_admin": "admin-secret",
        "user_alice": "alice-secret",
    }


def test_several_modules_flags_in_any_case_and_bare_values() -> None:
    entries = parse_jaas_config(
        "a.First REQUIRED debug=true;\n  b.Second sufficient;\tc.Third Optional k=v; d.D requisite;"
    )
    assert [(e.login_module, e.control_flag) for e in entries] == [
        ("a.First", ControlFlag.REQUIRED),
        ("b.Second", ControlFlag.SUFFICIENT),
        ("c.Third", ControlFlag.OPTIONAL),
        ("d.D", ControlFlag.REQUISITE),
    ]
    assert entries[0].options == {"debug": "true"} and entries[1].options == {}


def test_quoted_values_keep_separators_and_unescape_like_javas_stream_tokenizer() -> None:
    (entry,) = parse_jaas_config(
        'm required a="x;y=z // not a comment" b=\'single "quoted"\' c="tab\\there" '
        'd="quote\\" and backslash\\\\" e="octal\\101\\7" f="\\q" g="";'
    )
    assert dict(entry.options) == {
        "a": "x;y=z // not a comment",
        "b": 'single "quoted"',
        "c": "tab\there",
        "d": 'quote" and backslash\\',
        "e": "octalA\x07",
        "f": "q",
        "g": "",
    }


def test_comments_are_skipped_and_a_repeated_option_keeps_its_last_value() -> None:
    (entry,) = parse_jaas_config(
        "/* the broker's users */ m required // trailing comment\n"
        'user_a="1" /* inline */ user_a="2";'
    )
    assert entry.options == {"user_a": "2"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Login module not specified in JAAS config"),
        ("  /* only a comment */ ", "Login module not specified in JAAS config"),
        ("m", "Login module control flag not specified in JAAS config"),
        ("m mandatory;", "Invalid login module control flag 'mandatory' in JAAS config"),
        ("m required a=1", "JAAS config entry not terminated by semi-colon"),
        ("m required a=;", "Value not specified for key 'a' in JAAS config"),
        ("m required a;", "Value not specified for key 'a' in JAAS config"),
        ('m required a="unterminated;', "unterminated quoted value in JAAS config"),
        ("m required /* open", "unterminated /* comment in JAAS config"),
        ("; m required;", "Login module not specified in JAAS config"),
    ],
)
def test_malformed_configs_fail_with_kafkas_messages(text: str, message: str) -> None:
    with pytest.raises(JaasConfigError) as failure:
        parse_jaas_config(text)
    assert str(failure.value) == message


def test_errors_and_reprs_never_show_a_quoted_value() -> None:
    with pytest.raises(JaasConfigError) as failure:
        parse_jaas_config('m required user_a "s3cret-value";')
    assert "s3cret" not in str(failure.value)
    with pytest.raises(JaasConfigError) as failure:
        parse_jaas_config('m "s3cret-value";')
    assert "s3cret" not in str(failure.value)
    (entry,) = parse_jaas_config('m required user_a="s3cret-value";')
    assert "s3cret" not in repr(entry) and "user_a" in repr(entry)


_PIECES = [*"ab =;\"'\\/*\n\t0x\x00é", "required", "m required ", 'k="v";']


@given(st.lists(st.sampled_from(_PIECES)).map("".join))
def test_any_text_parses_or_fails_with_jaas_config_error(text: str) -> None:
    try:
        entries = parse_jaas_config(text)
    except JaasConfigError:
        return
    assert entries and all(isinstance(entry, LoginModuleEntry) for entry in entries)
