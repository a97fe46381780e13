"""Errors a user can act on. Each message names the bad value or the failed step."""


class BenchlibError(Exception):
    """Base class: anything benchlib raises on purpose."""


class ParameterError(BenchlibError, ValueError):
    """A notebook or CLI parameter is invalid; raised before any container starts."""


class UnknownEngineError(ParameterError, KeyError):
    """An engine key the registry does not know: a bad parameter, and a failed lookup."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class DockerUnavailableError(BenchlibError):
    """No Docker engine answers."""


class EngineUnavailableError(BenchlibError):
    """The engine cannot run on this host (no image and no local recipe, ...)."""


class ImageBuildError(BenchlibError):
    """A local image recipe failed to build."""


class EngineStartError(BenchlibError):
    """A container started but the engine never became ready (or exited)."""


class StoreError(BenchlibError):
    """The results store is unreadable or of an unknown schema version."""
