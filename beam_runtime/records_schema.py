"""JSON Schema of the on-disk records, generated from `beam_runtime.records`.

Do not edit: run `python -m beam_runtime.records` after changing a model.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MARKER: dict[str, Any] = {'properties': {'owner': {'const': 'lean-beam', 'type': 'string'},
                'schema': {'minimum': 1, 'type': 'integer'},
                'root': {'type': 'string'}},
 'required': ['owner', 'schema', 'root'],
 'type': 'object'}
MANIFEST: dict[str, Any] = {'additionalProperties': False,
 'properties': {'schema': {'maximum': 1, 'minimum': 1, 'type': 'integer'},
                'runtime_id': {'type': 'string'},
                'version': {'type': 'string'},
                'payload_sha256': {'pattern': '^[0-9a-f]{64}$', 'type': 'string'},
                'files': {'minimum': 0, 'type': 'integer'},
                'bytes': {'minimum': 0, 'type': 'integer'},
                'python': {'additionalProperties': False,
                           'properties': {'executable': {'type': 'string'},
                                          'version': {'type': 'string'},
                                          'abi': {'type': 'string'},
                                          'implementation': {'type': 'string'},
                                          'platform': {'type': 'string'}},
                           'required': ['executable',
                                        'version',
                                        'abi',
                                        'implementation',
                                        'platform'],
                           'type': 'object'},
                'entry_points': {'additionalProperties': {'type': 'string'}, 'type': 'object'},
                'created_at': {'pattern': '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z$',
                               'type': 'string'},
                'created_by': {'enum': ['pipx', 'uv', 'nix', 'venv', 'unknown'],
                               'type': 'string'},
                'bytecode_sha256': {'default': '',
                                    'pattern': '^([0-9a-f]{64})?$',
                                    'type': 'string'}},
 'required': ['schema',
              'runtime_id',
              'version',
              'payload_sha256',
              'files',
              'bytes',
              'python',
              'entry_points',
              'created_at',
              'created_by'],
 'type': 'object'}
