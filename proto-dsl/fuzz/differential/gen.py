#!/usr/bin/env python3
"""Random protocols for the differential test "accepted by the checker => compiles and runs"
(review 11; see README.md). Writes OUTDIR/protocols/m*.pipes, checks each with `pipes-proto
check`, and writes OUTDIR as a throwaway crate: one `pipes::proto!` per accepted protocol under
`#![deny(warnings)]`, with a smoke test each.

usage: gen.py SEED N OUTDIR [--wire] [--build-rs] [--allow-clippy]"""
import random, sys, os

seed, N, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
R = random.Random(seed)

STATE_NAMES = ["Start","Result","Option","Box","Vec","String","Send","Sync","Sized","Drop",
  "Iterator","Default","Clone","Copy","Debug","Fn","init","Recv","Either","SendError",
  "RecvError","Message","T","U","N","Ok","Err","Some","None","Error","Duration","Future",
  "Pin","Poll","Context","Waker","Unpin","PhantomData","Into","From","Any","Packet","Lane",
  "Endpoint","State","Next","Payload","Session","Protocol","main","std","core","alloc",
  "r#type","r#match","r#fn","Ärger","idle","Params","Params_","Marker","Phantom","A","B",
  "Client","Server","S","Unit","TryRecvError","RecvTimeoutError","Select","Wire2","Node",
  "Frame","Buf","Slot","Lanes","Inner","Outer","Done","End","Stop","Never","Infallible","u8",
  "str","bool","usize","i32","Self_","self_","super_","Item","Output","Target","Mutex","Arc",
  "Rc","Cell","Sender","Receiver","Sealed","Private","private","M"]
MSG_NAMES = ["Ok","Err","Some","None","Send","Drop","Clone","Into","From","Next","Item","Data",
  "Ping","Pong","Hello","HTTPGet","sayHello","Money2Go","insufficient_funds","r#Loop","r#move",
  "Close","Stop","Done","Step","Go","Init","New","Default","Fmt","Eq","Hash","Drop2","Finish",
  "Abort","into_inner","From_","Recv_","recv_async","Wait","Poll","Select","Map","Unwrap",
  "Expect","as_ref","To","SendError","Message","Payload","Ärger","Grüße","x","T","N","U","M",
  "drop","clone","fmt","eq","type_id","borrow","into","from","try_into","try_from","deref",
  "into_iter","Is","Self_","Phantom","Params","Marker","Buffer2","Inner","Session","Lane",
  "state","protocol","name","close","is_closed","peer","Pump","pump","Encode","Decode",
  "new","with","Tick","A","B","C","D"]
RESERVED = {"client","server","_params","Buffer","FromClient","FromServer","pipes","net",
  "WirePayload","PumpClient","PumpServer","payload","Wire"}
KEYWORDS = set("as break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while async await dyn abstract become box do final macro override priv typeof unsized virtual yield try gen".split())

def snake(name):
    n = name[2:] if name.startswith("r#") else name
    out = []
    for i, c in enumerate(n):
        if c.isupper():
            prev = n[i-1] if i > 0 else ""
            nxt = n[i+1] if i+1 < len(n) else ""
            if i > 0 and (prev.islower() or prev.isdigit() or (prev.isupper() and nxt.islower())):
                if out and out[-1] != "_":
                    out.append("_")
        out.append(c.lower())
    return "".join(out)

# ---- payload types: (type, value-or-None, serde?, sendable?) ----
def conc_type(depth=0, wire=False, lt=None):
    """a concrete type; lt: an own lifetime name usable here"""
    choices = [
        ("()", "()", True), ("u8", "7u8", True), ("i64", "-3i64", True), ("bool", "true", True),
        ("String", "String::from(\"s\")", True), ("::std::string::String", "String::new()", True),
        ("std::vec::Vec<u8>", "vec![1u8]", True), ("[u8; 3]", "[1u8; 3]", True),
        ("[u8; 1 + 1]", "[0u8; 2]", True), ("[u16; 2 * 2 - 1]", "[0u16; 3]", True),
        ("[u8; core::mem::size_of::<u32>()]", "[0u8; 4]", True),
        ("[u8; { const K: usize = 2; K }]", "[0u8; 2]", True),
        ("(u8,)", "(1u8,)", True), ("(u8, String)", "(1u8, String::new())", True),
        ("((), ((u8,),))", "((), ((1u8,),))", True),
        ("Option<Box<u8>>", "Some(Box::new(1u8))", True),
        ("Result<u8, String>", "Ok(1u8)", True), ("Result<(), ()>", "Err(())", True),
        ("Vec<Option<Result<u8, String>>>", "vec![None]", True),
        ("std::collections::BTreeMap<String, Vec<u8>>", "Default::default()", True),
        ("Option<[u8; 2]>", "None", True),
    ]
    if not wire:
        choices += [
            ("&'static str", "\"hi\"", False), ("&'static [u8]", "&[1u8, 2][..]", False),
            ("fn(u8) -> u8", "(|x: u8| x) as fn(u8) -> u8", False),
            ("for<'x> fn(&'x u8) -> &'x u8", None, False),
            ("extern \"C\" fn()", None, False), ("unsafe fn() -> !", None, False),
            ("Box<dyn Fn(u8) -> u8 + Send>", "Box::new(|x: u8| x)", False),
            ("Box<dyn std::any::Any + Send + Sync>", "Box::new(1u8)", False),
            ("&'static dyn std::fmt::Debug", "&1u8", False),
            ("&'static (dyn Fn() + Sync)", None, False),
            ("<Vec<u8> as IntoIterator>::Item", "1u8", False),
            ("<u8 as ::core::ops::Add>::Output", "2u8", False),
            ("std::marker::PhantomData<fn() -> u8>", "std::marker::PhantomData", False),
            ("*const u8", "std::ptr::null()", False), ("std::rc::Rc<u8>", "std::rc::Rc::new(1)", False),
            ("std::cell::Cell<u8>", "std::cell::Cell::new(1)", False),
            ("Box<str>", "Box::from(\"x\")", False), ("Box<[u8]>", "Box::from([1u8])", False),
            ("std::sync::Arc<std::sync::Mutex<Vec<String>>>", "Default::default()", False),
            ("impl_free::Thing", "impl_free::Thing", False),
            ("crate::Shared", "crate::Shared", False), ("self::Local", "self::Local", False),
            ("super::Outer", "super::Outer", False),
            ("Login", "Login", False), ("client::Id", "client::Id", False),
            ("std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>", "Box::pin(async {})", False),
            ("std::num::NonZeroU8", "std::num::NonZeroU8::MIN", False),
            ("std::ops::Range<u8>", "0..1", False),
            ("[[u8; 2]; 3]", "[[0u8; 2]; 3]", False),
            ("[&'static str; 0]", "[]", False),
        ]
        if lt:
            choices += [
                (f"&{lt} str", None, False), (f"&{lt} mut Vec<u8>", None, False),
                (f"Box<dyn Fn(&u8) -> &u8 + Send + {lt}>", None, False),
                (f"&{lt} (dyn Fn() + Sync + {lt})", None, False),
                (f"std::borrow::Cow<{lt}, str>", None, False),
            ]
    t, v, _ = R.choice(choices)
    if depth < 2 and R.random() < 0.15:
        inner, iv = conc_type(depth + 1, wire, lt)
        wrap = R.choice(["Vec<{}>", "Option<{}>", "({},)", "({}, u8)", "[{}; 1]", "Box<{}>"])
        t2 = wrap.format(inner)
        val = None
        if iv is not None:
            val = {"Vec<{}>": "vec![{}]", "Option<{}>": "Some({})", "({},)": "({},)",
                   "({}, u8)": "({}, 0u8)", "[{}; 1]": "[{}]", "Box<{}>": "Box::new({})"}[wrap].format(iv)
        return t2, val
    return t, v

# bounds: atoms
BOUND_ATOMS = ["Send", "Clone", "'static", "Default", "std::fmt::Debug", "Copy", "Sync",
               "PartialEq", "Iterator<Item = u8>", "AsRef<[u8]>", "Fn(u8) -> u8", "send", "copy",
               "Into<String>"]
# concrete types satisfying each atom
SATISFY = {
 "Send": {"u8","String","()","Vec<u8>","std::ops::Range<u8>"},
 "send": {"u8","String","()","Vec<u8>","std::ops::Range<u8>"},
 "Clone": {"u8","String","()","Vec<u8>","std::ops::Range<u8>"},
 "'static": {"u8","String","()","Vec<u8>","std::ops::Range<u8>"},
 "Default": {"u8","String","()","Vec<u8>","std::ops::Range<u8>"},
 "std::fmt::Debug": {"u8","String","()","Vec<u8>","std::ops::Range<u8>"},
 "Copy": {"u8","()"}, "copy": {"u8","()"},
 "Sync": {"u8","String","()","Vec<u8>","std::ops::Range<u8>"},
 "PartialEq": {"u8","String","()","Vec<u8>","std::ops::Range<u8>"},
 "Iterator<Item = u8>": {"std::ops::Range<u8>"},
 "AsRef<[u8]>": {"String","Vec<u8>"},
 "Fn(u8) -> u8": {"fn(u8) -> u8"},
 "Into<String>": {"String"},
 "client::Marker": {"client::Id"},
}
VALUES = {"u8":"1u8","String":"String::new()","()":"()","Vec<u8>":"Vec::<u8>::new()",
          "std::ops::Range<u8>":"0u8..2","fn(u8) -> u8":"((|x| x) as fn(u8) -> u8)", "client::Id": "client::Id"}

class P: pass

def gen_protocol(idx, wire):
    p = P(); p.wire = wire
    nstates = R.choice([1, 1, 2, 2, 3, 3, 4, 5, 8, 12])
    names = []
    pool = [n for n in STATE_NAMES if not (wire and n == "Wire")]
    while len(names) < nstates:
        n = R.choice(pool)
        if n not in names: names.append(n)
    states = []
    for n in names:
        s = P(); s.name = n
        s.dir = R.choice(["send", "recv"])
        s.params = []  # (kind, name, bounds)
        if not wire and R.random() < 0.35:
            used = set()
            for _ in range(R.choice([1, 1, 2, 3])):
                k = R.choice(["lt", "ty", "ty", "const"])
                if k == "lt":
                    nm = R.choice(["'a", "'b", "'de", "'static_"])
                    if nm in used: continue
                    used.add(nm); s.params.append(("lt", nm, []))
                elif k == "ty":
                    nm = R.choice(["T", "U", "V", "Item", "Message", "S", "A", "B", "Fn_", "W", "X", "M"])
                    if nm in used or nm in names and R.random() < 0.5: continue
                    used.add(nm)
                    bounds = []
                    if R.random() < 0.7:
                        bounds = R.sample(BOUND_ATOMS, R.choice([1, 1, 2, 3]))
                        # must be satisfiable by some concrete type
                        sat = set.intersection(*(SATISFY[b] for b in bounds))
                        if not sat: bounds = bounds[:1]
                    qs = R.random() < 0.1 and not bounds
                    s.params.append(("ty", nm, bounds + (["?Sized"] if qs else [])))
                else:
                    nm = R.choice(["N", "LEN", "_2", "K", "B_"])
                    if nm in used: continue
                    used.add(nm)
                    ty = R.choice(["usize", "usize", "bool", "u8", "char", "i32"])
                    s.params.append(("const", nm, [ty]))
            # lifetimes first
            s.params.sort(key=lambda x: 0 if x[0] == "lt" else 1)
        s.attrs = []
        if R.random() < 0.2: s.attrs.append("/// A state: `" + n + "` <b>bold</b> [link]")
        if R.random() < 0.1: s.attrs.append('#[doc = "state doc"]')
        if R.random() < 0.05: s.attrs.append("#[deprecated]")
        elif R.random() < 0.05: s.attrs.append('#[deprecated(note = "old")]')
        if R.random() < 0.05: s.attrs.append("#[allow(unreachable_states)]")
        if R.random() < 0.05: s.attrs.append("#[cfg_attr(any(), derive(Hash))]")
        if R.random() < 0.05: s.attrs.append("#[allow(clippy::large_enum_variant)]")
        if R.random() < 0.04: s.attrs.append("#[must_use]")
        if R.random() < 0.04: s.attrs.append("#[non_exhaustive]")
        if R.random() < 0.04: s.attrs.append("#[repr(u8)]")
        states.append(s)
    p.states = states
    # messages
    for i, s in enumerate(states):
        s.msgs = []
        if i > 0 and R.random() < 0.15:
            s.terminal = True
            continue
        s.terminal = False
        nm = R.choice([1, 1, 2, 2, 3, 4, 6])
        methods = set()
        lts = [q[1] for q in s.params if q[0] == "lt"]
        tys = [q for q in s.params if q[0] == "ty"]
        consts = [q for q in s.params if q[0] == "const"]
        for _ in range(nm):
            mn = R.choice(MSG_NAMES)
            me = snake(mn)
            if me in methods or me in ("recv", "try_recv", "recv_timeout") or me in KEYWORDS:
                continue
            methods.add(me)
            m = P(); m.name = mn
            payload = []
            for _ in range(R.choice([0, 0, 1, 1, 2, 3])):
                r = R.random()
                if tys and r < 0.3:
                    t = R.choice(tys)
                    if "?Sized" in t[2]:
                        payload.append((R.choice([f"Box<{t[1]}>", f"&'static {t[1]}" if "'static" in t[2] else f"Box<{t[1]}>"]), None))
                    else:
                        opts = [t[1], f"Vec<{t[1]}>", f"Option<{t[1]}>", f"({t[1]}, u8)", f"fn({t[1]}) -> {t[1]}",
                                f"std::marker::PhantomData<{t[1]}>"]
                        if consts and consts[0][2] == ["usize"]:
                            opts.append(f"[{t[1]}; {consts[0][1]}]")
                        payload.append((R.choice(opts), None))
                elif consts and r < 0.4 and any(c[2] == ["usize"] for c in consts):
                    c = [c for c in consts if c[2] == ["usize"]][0]
                    payload.append((R.choice([f"[u8; {c[1]}]", f"[[u8; 2]; {c[1]}]", f"[[u8; 1]; {c[1]}]"]), None))
                else:
                    payload.append(conc_type(0, wire, R.choice(lts) if lts else None))
            m.payload = payload
            # next
            r = R.random()
            if r < 0.2:
                m.next = None; m.args = []
            else:
                tgt = R.choice(states)
                m.next = tgt
                m.args = gen_args(s, tgt)
                if m.args is None:
                    m.next = None; m.args = []
            m.attrs = []
            if R.random() < 0.15: m.attrs.append("/// Message `" + mn + "`.")
            if R.random() < 0.06: m.attrs.append("#[cfg(any())]")
            if R.random() < 0.06: m.attrs.append("#[cfg(all())]")
            if R.random() < 0.04: m.attrs.append("#[deprecated]")
            if R.random() < 0.03: m.attrs.append('#[doc(alias = "other")]')
            if R.random() < 0.03: m.attrs.append("#[allow(clippy::too_many_arguments)]")
            if R.random() < 0.03: m.attrs.append("#[cfg_attr(all(), doc = \"extra\")]")
            s.msgs.append(m)
        if not s.msgs:
            s.terminal = True
    shadowable = set()
    for s_ in states:
        for kind, nm, b in s_.params:
            for x in b:
                head = x.split("::")[0].split("<")[0].split("(")[0].strip()
                shadowable.add(head)
    for s_ in states:
        if s_.name in shadowable:
            s_.name = "Z" + s_.name
    p.attrs = []
    if wire: p.attrs.append("#[wire]")
    if R.random() < 0.3: p.attrs.append("/// Protocol " + str(idx) + " with `code` and *emphasis*.")
    if R.random() < 0.6: p.attrs.append("#[allow(unreachable_states)]")
    if R.random() < 0.05: p.attrs.append("#[allow(dead_code)]")
    if R.random() < 0.05: p.attrs.append("#[deprecated]")
    if R.random() < 0.05: p.attrs.append("#[cfg(all())]")
    p.vis = R.choice(["pub", "pub", "pub(crate)", "pub(super)", "pub(in crate)", ""])
    p.name = R.choice(["proto", "p", "r#type", "core", "std", "pipes", "init", "client_", "bank", "x"]) + (str(idx) if True else "")
    return p

def gen_args(src, tgt):
    args = []
    srcl = [q for q in src.params if q[0] == "lt"]
    srct = [q for q in src.params if q[0] == "ty"]
    srcc = [q for q in src.params if q[0] == "const"]
    for kind, nm, b in tgt.params:
        if kind == "lt":
            args.append(R.choice([q[1] for q in srcl] + ["'static"]))
        elif kind == "ty":
            bounds = [x for x in b if x != "?Sized"]
            cands = []
            for q in srct:
                qb = set(x.lower() if x in ("send", "copy") else x for x in q[2])
                need = set(x.lower() if x in ("Send", "Copy") else x for x in bounds)
                need = set(x.replace("Send", "send").replace("Copy", "copy") for x in bounds)
                have = set(x.replace("Send", "send").replace("Copy", "copy") for x in q[2] if x != "?Sized")
                if need <= have and ("?Sized" not in q[2] or "?Sized" in b):
                    cands.append(q[1])
            sat = set.intersection(*(SATISFY[x] for x in bounds)) if bounds else {"u8", "String", "()", "Vec<u8>"}
            if not sat: return None
            conc = sorted(sat)
            if cands and R.random() < 0.6:
                args.append(R.choice(cands))
            else:
                args.append(R.choice(conc))
        else:
            ty = b[0]
            own = [q[1] for q in srcc if q[2] == [ty]]
            lit = {"usize": ["3", "{ 1 + 1 }", "0", "{ usize::MAX >> 62 }"], "bool": ["true", "{ !false }"],
                   "u8": ["255", "{ 2 * 3 }"], "char": ["'x'", "'>'", "','"], "i32": ["-1", "{ -2 }"]}[ty]
            if own and R.random() < 0.6:
                args.append(R.choice(own + ["{ " + own[0] + " }"]))
            else:
                args.append(R.choice(lit))
    return args

def render(p):
    lines = []
    for a in p.attrs: lines.append(a)
    lines.append(f"{p.vis} {p.name} {{".strip())
    for s in p.states:
        for a in s.attrs: lines.append("    " + a)
        gp = ""
        if s.params:
            parts = []
            for kind, nm, b in s.params:
                if kind == "lt": parts.append(nm)
                elif kind == "ty": parts.append(nm + (": " + " + ".join(b) if b else ""))
                else: parts.append(f"const {nm}: {b[0]}")
            gp = "<" + ", ".join(parts) + ">"
        if s.terminal and not s.params and R.random() < 0.5:
            lines.append(f"    {s.name} {{}}")
            continue
        lines.append(f"    {s.name}: {s.dir}{gp} {{")
        for m in s.msgs:
            for a in m.attrs: lines.append("        " + a)
            pl = "(" + ", ".join(t for t, _ in m.payload) + ")" if m.payload else ""
            if m.next is None: nx = "!"
            else:
                nx = m.next.name + ("<" + ", ".join(m.args) + ">" if m.args else "")
            lines.append(f"        {m.name}{pl} -> {nx},")
        lines.append("    }")
    lines.append("}")
    return "\n".join(lines)

def concrete_args(s):
    """concrete type arguments for init of start state s, or None"""
    out = []
    for kind, nm, b in s.params:
        if kind == "lt": out.append("'static")
        elif kind == "ty":
            bounds = [x for x in b if x != "?Sized"]
            sat = set.intersection(*(SATISFY[x] for x in bounds)) if bounds else {"u8"}
            if not sat: return None
            out.append(sorted(sat)[0])
        else:
            out.append({"usize": "2", "bool": "true", "u8": "1", "char": "'c'", "i32": "0"}[b[0]])
    return out

def smoke(p, modname):
    s = p.states[0]
    args = concrete_args(s)
    if args is None: return ""
    turbofish = "::<" + ", ".join(args) + ">" if args else ""
    body = [f"let (server, client) = {modname}::{p.name}::init{turbofish}();"]
    ms = [m for m in s.msgs if "#[cfg(any())]" not in m.attrs and "#[deprecated]" not in m.attrs]
    m = ms[0] if ms else None
    if m is not None and all(v is not None for _, v in m.payload) and not (s.params and m.payload):
        sender, receiver = ("client", "server") if s.dir == "send" else ("server", "client")
        vals = ", ".join(v for _, v in m.payload)
        meth = snake(m.name)
        if meth in KEYWORDS: meth = "r#" + meth
        body.append(f"let sent = {sender}.{meth}({vals});")
        body.append("assert!(sent.is_ok());")
        body.append(f"let got = {receiver}.recv();")
        body.append("assert!(got.is_ok());")
        body.append("let _ = (got, sent);")
    else:
        body.append("drop(server); drop(client);")
    return "\n    ".join(body)

wire_mode = "--wire" in sys.argv
os.makedirs(out + "/src", exist_ok=True)
os.makedirs(out + "/protocols", exist_ok=True)
os.makedirs(out + "/refused", exist_ok=True)
# The repository's root (this file is proto-dsl/fuzz/differential/gen.py), and the command
# line built from it (`cargo build -p pipes-cli`), or $PIPES_PROTO.
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CLI = os.environ.get("PIPES_PROTO") or os.path.join(
    os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "debug", "pipes-proto")
with open(out + "/Cargo.toml", "w") as f:
    features = ', features = ["net"]' if wire_mode else ""
    build = (f'\n[build-dependencies]\nproto-dsl = {{ path = "{ROOT}/proto-dsl" }}\n'
             if "--build-rs" in sys.argv else "")
    f.write(f'''[package]
name = "generated-protocols"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
pipes = {{ path = "{ROOT}"{features} }}
{build}
[workspace]
''')
refused = []; accepted = 0; built = []
lib = ["#![deny(warnings)]", "#![allow(missing_docs, dead_code)]",
       "#![allow(clippy::all)]" if "--allow-clippy" in sys.argv else "",
       "pub struct Shared;", "pub struct Outer;", "pub struct Login;",
       "pub mod impl_free { pub struct Thing; }",
       "pub mod client { pub struct Id; pub trait Marker {} impl Marker for Id {} }", ""]
tests = []
for i in range(N):
    wire = wire_mode and R.random() < 0.5
    p = gen_protocol(i, wire)
    text = render(p)
    import subprocess
    with open(f"{out}/protocols/m{i}.pipes", "w") as f: f.write(text + "\n")
    r = subprocess.run([CLI, "check", f"{out}/protocols/m{i}.pipes"], capture_output=True, text=True)
    if r.returncode != 0:
        refused.append((i, text, r.stderr))
        os.rename(f"{out}/protocols/m{i}.pipes", f"{out}/refused/m{i}.pipes")
        with open(f"{out}/refused/m{i}.err", "w") as f: f.write(r.stderr)
        continue
    accepted += 1
    built.append(i)
    mod = f"m{i}"
    lib.append(f"pub mod {mod} {{")
    lib.append("    #![allow(unused_imports)]")
    lib.append("    pub struct Local; pub struct Login; pub mod client { pub struct Id; pub use crate::client::Marker; impl Marker for Id {} }")
    lib.append("    pub use super::{impl_free, Outer};")
    lib.append(f"    // protocol {i}")
    lib.append("    pipes::proto! {")
    lib.append("\n".join("        " + l for l in text.split("\n")))
    lib.append("    }")
    lib.append("}")
    with open(f"{out}/protocols/{mod}.pipes", "w") as f: f.write(text + "\n")
    sm = smoke(p, mod)
    if sm:
        lib.insert(len(lib) - 1, f"    #[test]\n    #[allow(deprecated)]\n    fn smoke_{i}() {{\n    {sm.replace(mod + '::', 'self::')}\n    }}")
if "--build-rs" in sys.argv:
    for i in built:
        lib.append(f"pub mod b{i} {{")
        lib.append("    #![allow(unused_imports)]")
        lib.append("    pub struct Local; pub struct Login; pub mod client { pub struct Id; pub use crate::client::Marker; impl Marker for Id {} }")
        lib.append("    pub use super::{impl_free, Outer};")
        lib.append(f"    include!(concat!(env!(\"OUT_DIR\"), \"/m{i}.rs\"));")
        lib.append("}")
    with open(out + "/build.rs", "w") as f:
        f.write('''fn main() {
    let mut files: Vec<_> = std::fs::read_dir("protocols").unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    proto_dsl::Config::new().runtime("::pipes").compile(&files).unwrap();
    println!("cargo:rerun-if-changed=protocols");
}
''')
lib.append("#[cfg(test)] mod smoke {")
lib.append("#![allow(clippy::all)]")
lib += tests
lib.append("}")
with open(out + "/src/lib.rs", "w") as f: f.write("\n".join(lib) + "\n")
print("accepted", accepted, "refused", len(refused))
