"""bnorm's errors and warnings, as Python classes (docs/python.md, "Errors").

Every error bnorm raises is a bnorm.Error, one subclass per kind, which is
also the CLI's exit code:

    UsageError        a call bnorm refuses as the CLI refuses its options  (exit 2)
    InputError        a model or input that cannot be read or is invalid    (exit 2)
    UnsupportedError  a valid case bnorm does not handle                    (exit 2)
    CheckFailed       a numeric check did not hold (fold/upgrade verify)    (exit 1)

str(error) is the message as the CLI prints it after "bnorm: error: ",
followed by its hint line when there is one.
"""


class Error(Exception):
    """A bnorm error: the CLI's message, and where it happened.

    Attributes: message (str, as the CLI prints it: file and node first),
    hint (str or None), file (str or None), node (the node's label or None),
    op (str or None), version (the op's schema version, or None),
    exit_code (the CLI's: 2, or 1 for CheckFailed), report (the report, for
    a CheckFailed: the document the CLI would print) and model (for a
    CheckFailed of fold or upgrade: the model as converted, which the CLI
    would not write).
    """

    def __init__(self, message, *, hint=None, file=None, node=None, op=None, version=None, exit_code=2,
                 report=None, model=None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.file = file
        self.node = node
        self.op = op
        self.version = version
        self.exit_code = exit_code
        self.report = report
        self.model = model

    def __str__(self):
        return self.message + (f"\n  hint: {self.hint}" if self.hint else "")


class UsageError(Error, ValueError):
    """An argument bnorm refuses, with the message the CLI gives for its option."""


class InputError(Error):
    """A model or input that cannot be read, or is not valid."""


class UnsupportedError(Error):
    """A valid case bnorm does not handle (it never computes with another version's meaning)."""


class CheckFailed(Error):
    """A numeric check that did not hold: fold or upgrade with verify=True found a result off.

    report is the whole report; model the result the CLI would not have written.
    """


class BnormWarning(UserWarning):
    """What the CLI prints as "bnorm: warning: ..." (a NaN variance, a training node kept, ...)."""
