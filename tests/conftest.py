"""For every test: response keys no version of their entity knows fail instead of vanishing
(``build_entity``'s strict mode, inherited by the brokers the tests start)."""

from __future__ import annotations

import os

from odradek.broker.protocol.entity_builder import STRICT_ENV

os.environ[STRICT_ENV] = "1"
