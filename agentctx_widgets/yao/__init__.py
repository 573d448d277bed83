"""Yao assistants as they are today, run on the kit's hooks and models (issue #13)."""

from .typescript import ProcessError, TypeScriptHooks, TypeScriptLoadError, load_ts_module_set

__all__ = ["ProcessError", "TypeScriptHooks", "TypeScriptLoadError", "load_ts_module_set"]
