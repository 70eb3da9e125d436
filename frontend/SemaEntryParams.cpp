// Parameters at the entry: slots that reach an entry body have full names.
// Created ones become Program parameters (one name, one type and
// initialiser, whichever entries create it), tied ones must name a parameter
// the entry created before, and the body reads each with one `param_ref`.
#include "frontend/Sema.h"

namespace modelc::sema {

namespace {
/// Pushes a slot's call chain on the diagnostics' call stack for one message.
class ChainScope {
public:
  ChainScope(DiagnosticEngine &diag, const SlotOrigin &origin)
      : diag(diag), depth(origin.size()) {
    for (const CallSite &c : origin)
      diag.pushCall(c.callee, c.site);
  }
  ~ChainScope() {
    for (size_t i = 0; i < depth; ++i)
      diag.popCall();
  }

private:
  DiagnosticEngine &diag;
  size_t depth;
};
} // namespace

int Sema::paramRef(const std::string &name, const TensorType &type,
                   SourceLoc loc) {
  EntryState &entry = *cur().entry;
  auto it = entry.paramRefs.find(name);
  if (it != entry.paramRefs.end())
    return it->second;
  AttrDict attrs;
  attrs["name"] = Attr(name);
  // A buffer is read with a load, which is never on a gradient path.
  auto created = entry.created.find(name);
  bool buffer = created != entry.created.end() && created->second.buffer;
  int value = cur().builder.emit1(buffer ? "load" : "param_ref", {}, type,
                                  attrs, loc);
  entry.paramRefs[name] = value;
  entry.usedParams.push_back(name);
  return value;
}

void Sema::reportDuplicateParam(const std::string &name, SourceLoc firstLoc,
                                const SlotOrigin &firstOrigin, SourceLoc loc,
                                const SlotOrigin &origin) {
  if (duplicatesOfCall >= 0 && duplicatesOfCall++ > 0)
    return;
  {
    ChainScope chain(diag, origin);
    diag.error(loc, "parameter '" + name + "' is created twice");
  }
  if (!firstOrigin.empty())
    diag.note(firstOrigin.front().site,
              "'" + name + "' was first created by this call");
  else
    diag.note(firstLoc, "'" + name + "' was first created here");
  if (origin.empty() && firstOrigin.empty())
    diag.note(SourceLoc{}, "a `param` statement in a `for` loop runs once per "
                           "iteration; put it in a block called with `as "
                           "NAME[i]`");
  else
    diag.note(SourceLoc{},
              "give one of the calls a scope with `as`, e.g. `... as NAME`");
}

void Sema::reportScopeClash(const std::string &name, SourceLoc loc,
                            const SlotOrigin &origin) {
  // A PyTorch module's state_dict can't hold both `w` (a tensor) and
  // `w.weight` (w as a submodule): a full name that is a strict dotted
  // prefix of another can't be loaded there.
  const auto &created = cur().entry->created;
  const EntryParam *other = nullptr;
  std::string scope, inner;
  for (size_t dot = name.find('.'); dot != std::string::npos && !other;
       dot = name.find('.', dot + 1)) {
    auto it = created.find(name.substr(0, dot));
    if (it != created.end()) {
      other = &it->second;
      scope = it->first;
      inner = name;
    }
  }
  if (!other) {
    auto it = created.lower_bound(name + ".");
    if (it != created.end() &&
        it->first.compare(0, name.size() + 1, name + ".") == 0) {
      other = &it->second;
      scope = name;
      inner = it->first;
    }
  }
  // One error per scope: `w.weight` and `w.bias` clash with `w` alike.
  if (!other || !cur().entry->scopeClashes.insert(scope).second)
    return;
  {
    ChainScope chain(diag, origin);
    diag.error(loc, "parameter '" + scope + "' is also the scope of '" + inner +
                        "'; a PyTorch module can't have both");
  }
  const std::string &otherName = scope == name ? inner : scope;
  diag.note(other->loc, "'" + otherName + "' is created here");
  for (auto c = other->origin.rbegin(); c != other->origin.rend(); ++c)
    diag.note(c->site, "in call to '" + c->callee + "' from here");
}

void Sema::mergeProgramParam(const std::string &name, const EntryParam &p) {
  const std::string &label = cur().entry->label;
  auto it = paramIndex.find(name);
  if (it == paramIndex.end()) {
    // Program::totalParameterCount sums them in an int64.
    if (__builtin_add_overflow(parameterElements, p.type.numElements(),
                               &parameterElements)) {
      diag.error(p.loc, "the program's parameters have more than 2^63 - 1 "
                        "elements in all");
      return;
    }
    Parameter param;
    param.name = name;
    param.type = p.type;
    param.init = p.init;
    param.buffer = p.buffer;
    param.loc = p.loc;
    param.callSite = p.origin.empty() ? p.loc : p.origin.front().site;
    paramIndex[name] = program.params.size();
    paramOwner[name] = label;
    program.params.push_back(std::move(param));
    return;
  }
  const Parameter &known = program.params[it->second];
  if (known.type == p.type && known.init.kind == p.init.kind &&
      known.init.args == p.init.args && known.buffer == p.buffer)
    return;
  {
    ChainScope chain(diag, p.origin);
    diag.error(p.loc, "parameter '" + name + "' is " + p.type.str() + " = " +
                          initializerText(p.init) + " in " + label + ", but " +
                          known.type.str() + " = " +
                          initializerText(known.init) + " in " +
                          paramOwner[name] +
                          "; entries share parameters by name");
  }
  diag.note(known.callSite, "created for " + paramOwner[name] + " here");
}

int Sema::entryParam(const std::string &name, const TensorType &type,
                     const Initializer &init, bool buffer, SourceLoc loc,
                     const SlotOrigin &origin) {
  EntryState &entry = *cur().entry;
  SourceLoc site = origin.empty() ? loc : origin.front().site;
  auto it = entry.created.find(name);
  if (it != entry.created.end()) {
    reportDuplicateParam(name, it->second.loc, it->second.origin, loc, origin);
    return paramRef(name, it->second.type, site);
  }
  reportScopeClash(name, loc, origin);
  EntryParam p{type, init, loc, origin, buffer};
  entry.created[name] = p;
  mergeProgramParam(name, p);
  return paramRef(name, type, site);
}

int Sema::entryTiedParam(const std::string &name, const TensorType &type,
                         SourceLoc loc, const SlotOrigin &origin) {
  EntryState &entry = *cur().entry;
  SourceLoc site = origin.empty() ? loc : origin.front().site;
  auto it = entry.created.find(name);
  if (it == entry.created.end()) {
    std::vector<std::string> known;
    for (const auto &p : entry.created)
      known.push_back(p.first);
    ChainScope chain(diag, origin);
    diag.error(loc, "tied parameter '" + name +
                        "' is not created before this point in " + entry.label +
                        didYouMean(name, known));
    return paramRef(name, type, site);
  }
  if (it->second.type != type) {
    {
      ChainScope chain(diag, origin);
      diag.error(loc, "tied parameter '" + name + "' is used as " + type.str() +
                          " here, but it is " + it->second.type.str());
    }
    diag.note(it->second.loc, "'" + name + "' is created here");
  }
  return paramRef(name, it->second.type, site);
}

} // namespace modelc::sema
