from __future__ import annotations

from odradek.operator.pod_init import with_rack


def test_rack_is_appended_to_the_broker_properties() -> None:
    assert with_rack("a=1\n", "eu-west-1a") == "a=1\nbroker.rack=eu-west-1a\n"


def test_an_existing_rack_line_is_replaced() -> None:
    assert with_rack("broker.rack=old\na=1\n", "new") == "a=1\nbroker.rack=new\n"


def test_a_node_without_the_label_leaves_the_rack_unset() -> None:
    assert with_rack("a=1\n", None) == "a=1\n"
