# Generated from proto/drift/v1/memory_backend.proto by grpcio-tools==1.66.2; proto sha256 8e8820445b0419e0be49f5373037fb9520f62ca4fbb353218109513ec168f8b9. Do not edit.
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Message(_message.Message):
    __slots__ = ("message_id", "author", "role", "text", "timestamp", "scope")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    author: str
    role: str
    text: str
    timestamp: str
    scope: str
    def __init__(self, message_id: _Optional[str] = ..., author: _Optional[str] = ..., role: _Optional[str] = ..., text: _Optional[str] = ..., timestamp: _Optional[str] = ..., scope: _Optional[str] = ...) -> None: ...

class Session(_message.Message):
    __slots__ = ("session_id", "index", "time", "participants", "messages")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    PARTICIPANTS_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    index: int
    time: str
    participants: _containers.RepeatedScalarFieldContainer[str]
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    def __init__(self, session_id: _Optional[str] = ..., index: _Optional[int] = ..., time: _Optional[str] = ..., participants: _Optional[_Iterable[str]] = ..., messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ...) -> None: ...

class DescribeRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Capabilities(_message.Message):
    __slots__ = ("provenance", "snapshot", "forget", "scopes", "time_aware", "flush_signal", "deterministic")
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    FORGET_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    TIME_AWARE_FIELD_NUMBER: _ClassVar[int]
    FLUSH_SIGNAL_FIELD_NUMBER: _ClassVar[int]
    DETERMINISTIC_FIELD_NUMBER: _ClassVar[int]
    provenance: bool
    snapshot: bool
    forget: bool
    scopes: bool
    time_aware: bool
    flush_signal: bool
    deterministic: bool
    def __init__(self, provenance: bool = ..., snapshot: bool = ..., forget: bool = ..., scopes: bool = ..., time_aware: bool = ..., flush_signal: bool = ..., deterministic: bool = ...) -> None: ...

class DescribeResponse(_message.Message):
    __slots__ = ("name", "version", "capabilities", "internal_models", "settings")
    class SettingsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    INTERNAL_MODELS_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    capabilities: Capabilities
    internal_models: _containers.RepeatedScalarFieldContainer[str]
    settings: _containers.ScalarMap[str, str]
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., capabilities: _Optional[_Union[Capabilities, _Mapping]] = ..., internal_models: _Optional[_Iterable[str]] = ..., settings: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ResetRequest(_message.Message):
    __slots__ = ("namespace",)
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    def __init__(self, namespace: _Optional[str] = ...) -> None: ...

class ResetResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Usage(_message.Message):
    __slots__ = ("input_tokens", "output_tokens", "llm_calls")
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    LLM_CALLS_FIELD_NUMBER: _ClassVar[int]
    input_tokens: int
    output_tokens: int
    llm_calls: int
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., llm_calls: _Optional[int] = ...) -> None: ...

class StoreRequest(_message.Message):
    __slots__ = ("namespace", "session")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    session: Session
    def __init__(self, namespace: _Optional[str] = ..., session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class StoreResponse(_message.Message):
    __slots__ = ("usage", "items_stored")
    USAGE_FIELD_NUMBER: _ClassVar[int]
    ITEMS_STORED_FIELD_NUMBER: _ClassVar[int]
    usage: Usage
    items_stored: int
    def __init__(self, usage: _Optional[_Union[Usage, _Mapping]] = ..., items_stored: _Optional[int] = ...) -> None: ...

class FlushRequest(_message.Message):
    __slots__ = ("namespace", "timeout_s")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    timeout_s: float
    def __init__(self, namespace: _Optional[str] = ..., timeout_s: _Optional[float] = ...) -> None: ...

class FlushResponse(_message.Message):
    __slots__ = ("ready", "note", "usage")
    READY_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    ready: bool
    note: str
    usage: Usage
    def __init__(self, ready: bool = ..., note: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ...) -> None: ...

class RetrieveRequest(_message.Message):
    __slots__ = ("namespace", "query", "k", "querying_entity", "now")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    K_FIELD_NUMBER: _ClassVar[int]
    QUERYING_ENTITY_FIELD_NUMBER: _ClassVar[int]
    NOW_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    query: str
    k: int
    querying_entity: str
    now: str
    def __init__(self, namespace: _Optional[str] = ..., query: _Optional[str] = ..., k: _Optional[int] = ..., querying_entity: _Optional[str] = ..., now: _Optional[str] = ...) -> None: ...

class Hit(_message.Message):
    __slots__ = ("text", "score", "source_ids", "timestamp")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    text: str
    score: float
    source_ids: _containers.RepeatedScalarFieldContainer[str]
    timestamp: str
    def __init__(self, text: _Optional[str] = ..., score: _Optional[float] = ..., source_ids: _Optional[_Iterable[str]] = ..., timestamp: _Optional[str] = ...) -> None: ...

class RetrieveResponse(_message.Message):
    __slots__ = ("hits", "usage")
    HITS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[Hit]
    usage: Usage
    def __init__(self, hits: _Optional[_Iterable[_Union[Hit, _Mapping]]] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ...) -> None: ...

class SnapshotRequest(_message.Message):
    __slots__ = ("namespace",)
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    def __init__(self, namespace: _Optional[str] = ...) -> None: ...

class MemoryItem(_message.Message):
    __slots__ = ("item_id", "text", "source_ids", "timestamp")
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    item_id: str
    text: str
    source_ids: _containers.RepeatedScalarFieldContainer[str]
    timestamp: str
    def __init__(self, item_id: _Optional[str] = ..., text: _Optional[str] = ..., source_ids: _Optional[_Iterable[str]] = ..., timestamp: _Optional[str] = ...) -> None: ...

class ForgetRequest(_message.Message):
    __slots__ = ("namespace", "source_ids")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    source_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, namespace: _Optional[str] = ..., source_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ForgetResponse(_message.Message):
    __slots__ = ("items_removed",)
    ITEMS_REMOVED_FIELD_NUMBER: _ClassVar[int]
    items_removed: int
    def __init__(self, items_removed: _Optional[int] = ...) -> None: ...
