"""Every public function, class, method and property of the package has a
docstring (methods inherited from builtins such as ``tuple`` aside)."""

import inspect

import tgm
import tgm.xarray_backend


def public_members(cls):
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if inspect.isfunction(member) or isinstance(member, property):
            yield name, member


def missing_docstrings():
    missing = []
    modules = [(tgm, tgm.__all__), (tgm.xarray_backend, ["open_tgm_dataset", "TgmBackendEntrypoint"])]
    for module, names in modules:
        for name in names:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or callable(obj)):
                continue
            if not inspect.getdoc(obj):
                missing.append(f"{module.__name__}.{name}")
            if inspect.isclass(obj) and not issubclass(obj, BaseException):
                for mname, member in public_members(obj):
                    if not (member.__doc__ or "").strip():
                        missing.append(f"{module.__name__}.{name}.{mname}")
    return missing


def test_every_public_function_and_method_has_a_docstring():
    assert missing_docstrings() == []


def test_the_walk_finds_a_missing_docstring():
    class Undocumented:
        """Documented class."""

        def method(self):
            pass

    tgm.__all__.append("_Undocumented")
    tgm._Undocumented = Undocumented
    try:
        assert missing_docstrings() == ["tgm._Undocumented.method"]
    finally:
        tgm.__all__.remove("_Undocumented")
        del tgm._Undocumented
