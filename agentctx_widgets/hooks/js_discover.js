// Find the hook functions the source defined (function declarations, var, let or const). Evaluated in
// the global scope after the source, this is a function that Python calls with the bridge's `register`
// and the built-in Error, both taken from the prelude before the source ran (no global names involved).
(function (register, builtinError) {
  const found = { __proto__: null };
  try { if (typeof Create === "function") found.Create = Create; } catch (e) {}
  try { if (typeof Before === "function") found.Before = Before; } catch (e) {}
  try { if (typeof After === "function") found.After = After; } catch (e) {}
  try { if (typeof Done === "function") found.Done = Done; } catch (e) {}
  try { if (typeof Error === "function" && Error !== builtinError) found.Error = Error; } catch (e) {}
  try { if (typeof Next === "function") found.Next = Next; } catch (e) {} // Yao's Next (agentctx_widgets.yao)
  try { if (!found.Create && typeof create === "function") found.Create = create; } catch (e) {}
  try { if (!found.Before && typeof before === "function") found.Before = before; } catch (e) {}
  try { if (!found.After && typeof after === "function") found.After = after; } catch (e) {}
  try { if (!found.Done && typeof done === "function") found.Done = done; } catch (e) {}
  try { if (!found.Error && typeof error === "function") found.Error = error; } catch (e) {}
  // The seed's `function Error(ctx, messages, error)` replaces JavaScript's Error constructor: put the
  // constructor back, so `throw new Error("...")` in any hook means what a JavaScript author expects
  // (the hook itself is kept above). A `const Error` cannot be reassigned; then the hook keeps the name.
  if (found.Error) { try { Error = builtinError; } catch (e) {} }
  return register(found);
})
