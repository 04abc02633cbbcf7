from google.protobuf import descriptor_pb2 as _descriptor_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class IdKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ID_KIND_UNSPECIFIED: _ClassVar[IdKind]
    ID_KIND_TREE: _ClassVar[IdKind]
    ID_KIND_NODE: _ClassVar[IdKind]
    ID_KIND_MAIN_LINE_VERSION: _ClassVar[IdKind]
    ID_KIND_ARBITER_RULING: _ClassVar[IdKind]
    ID_KIND_COMMITMENT: _ClassVar[IdKind]
    ID_KIND_CONTEXT_VERSION: _ClassVar[IdKind]
    ID_KIND_CITATION_AUTHORIZATION: _ClassVar[IdKind]
    ID_KIND_CANON_INVITATION: _ClassVar[IdKind]
    ID_KIND_CANON_CANDIDATE: _ClassVar[IdKind]
    ID_KIND_ESTIMATE: _ClassVar[IdKind]
    ID_KIND_TASK: _ClassVar[IdKind]
    ID_KIND_SOURCE: _ClassVar[IdKind]
    ID_KIND_OWNER: _ClassVar[IdKind]
    ID_KIND_PROJECT: _ClassVar[IdKind]
    ID_KIND_STORY_OBJECT: _ClassVar[IdKind]
    ID_KIND_REVIEW_RESULT: _ClassVar[IdKind]
    ID_KIND_PREFERENCE: _ClassVar[IdKind]
    ID_KIND_CAPABILITY: _ClassVar[IdKind]
    ID_KIND_USER: _ClassVar[IdKind]
    ID_KIND_WORKER: _ClassVar[IdKind]
    ID_KIND_ATTACHMENT: _ClassVar[IdKind]
    ID_KIND_DOCUMENT: _ClassVar[IdKind]
ID_KIND_UNSPECIFIED: IdKind
ID_KIND_TREE: IdKind
ID_KIND_NODE: IdKind
ID_KIND_MAIN_LINE_VERSION: IdKind
ID_KIND_ARBITER_RULING: IdKind
ID_KIND_COMMITMENT: IdKind
ID_KIND_CONTEXT_VERSION: IdKind
ID_KIND_CITATION_AUTHORIZATION: IdKind
ID_KIND_CANON_INVITATION: IdKind
ID_KIND_CANON_CANDIDATE: IdKind
ID_KIND_ESTIMATE: IdKind
ID_KIND_TASK: IdKind
ID_KIND_SOURCE: IdKind
ID_KIND_OWNER: IdKind
ID_KIND_PROJECT: IdKind
ID_KIND_STORY_OBJECT: IdKind
ID_KIND_REVIEW_RESULT: IdKind
ID_KIND_PREFERENCE: IdKind
ID_KIND_CAPABILITY: IdKind
ID_KIND_USER: IdKind
ID_KIND_WORKER: IdKind
ID_KIND_ATTACHMENT: IdKind
ID_KIND_DOCUMENT: IdKind
NAMES_FIELD_NUMBER: _ClassVar[int]
names: _descriptor.FieldDescriptor
NEEDS_CONFIRMATION_FIELD_NUMBER: _ClassVar[int]
needs_confirmation: _descriptor.FieldDescriptor

class ConfirmationGrant(_message.Message):
    __slots__ = ("action", "user_field", "subject_field")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_FIELD_NUMBER: _ClassVar[int]
    action: str
    user_field: str
    subject_field: str
    def __init__(self, action: _Optional[str] = ..., user_field: _Optional[str] = ..., subject_field: _Optional[str] = ...) -> None: ...
