//! `cargo xtask modules [--crate DIR] [--check]`: which modules of a crate name which others through
//! `crate::`, `super::` or `self::` paths, and the circles (strongly connected components) among them, at the top level and
//! inside each folder (issue 15's measure of "no circle of modules").
//!
//! The scan works on tokens (proc-macro2), so comments and string literals never count, and paths
//! inside macro invocations (`format!("{}", crate::a::f())`) do.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// A module's path under the crate root, one segment each (`["foo", "bar"]` is `foo::bar`; the
/// root is empty).
type ModPath = Vec<String>;

/// The command line.
struct Options {
    /// The crate's source folder (default `loader/src`).
    dir: PathBuf,
    /// Fail when any circle exists.
    check: bool,
    /// Also print every edge, one line each.
    edges: bool,
}

/// A crate's modules and the edges "A names B through `crate::`" between them (never A to A).
struct ModuleGraph {
    /// Every module with a file under the folder.
    modules: BTreeSet<ModPath>,
    /// (user, used), each by its full path.
    edges: BTreeSet<(ModPath, ModPath)>,
}

/// The direct children of one module (the crate root or a folder) and the edges between them,
/// an edge between descendants counting for the children they lie under.
struct Scope {
    /// `crate` or the folder's module path.
    name: String,
    /// The children's names, sorted.
    nodes: Vec<String>,
    /// Each child's successors (indices into `nodes`), sorted.
    succ: Vec<Vec<usize>>,
}

/// Parses the arguments after `modules`.
fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        dir: crate::repo_root().join("loader/src"),
        check: false,
        edges: false,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.split_once('=') {
            Some(("--crate", dir)) => options.dir = PathBuf::from(dir),
            None if arg == "--crate" => {
                options.dir = PathBuf::from(args.next().ok_or("--crate needs a directory")?)
            }
            None if arg == "--check" => options.check = true,
            None if arg == "--edges" => options.edges = true,
            _ => {
                return Err(format!(
                    "unknown argument `{arg}` to modules\n\n{}",
                    crate::USAGE
                ))
            }
        }
    }
    Ok(options)
}

/// Entry point: prints the report; with `--check`, fails when a circle exists.
pub fn main(args: &[String]) -> Result<(), String> {
    let options = parse(args)?;
    let graph = ModuleGraph::read(&options.dir)?;
    let circles = report(&graph, &options.dir);
    if options.edges {
        print_edges(&graph);
    }
    if options.check && circles > 0 {
        return Err(format!(
            "modules --check: {circles} circle(s) of modules in {}",
            options.dir.display()
        ));
    }
    Ok(())
}

impl ModuleGraph {
    /// Reads every `.rs` file under `dir` and collects the edges.
    fn read(dir: &Path) -> Result<ModuleGraph, String> {
        let mut files = Vec::new();
        rs_files(dir, &mut files)?;
        let named: Vec<(ModPath, Vec<ModPath>)> = files
            .iter()
            .map(|file| {
                let text = std::fs::read_to_string(file)
                    .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
                let tokens = TokenStream::from_str(&text)
                    .map_err(|e| format!("cannot lex {}: {e}", file.display()))?;
                let module = module_path(file.strip_prefix(dir).expect("found under dir"));
                let paths = crate_paths(tokens, &module);
                Ok((module, paths))
            })
            .collect::<Result<_, String>>()?;
        let modules: BTreeSet<ModPath> = named.iter().map(|(module, _)| module.clone()).collect();
        let mut edges = BTreeSet::new();
        for (user, paths) in &named {
            for used in paths.iter().map(|path| resolve(&modules, path)) {
                if used != *user {
                    edges.insert((user.clone(), used));
                }
            }
        }
        Ok(ModuleGraph { modules, edges })
    }

    /// The modules that have child modules (folders), the crate root first.
    fn parents(&self) -> BTreeSet<ModPath> {
        self.modules
            .iter()
            .filter(|m| !m.is_empty())
            .map(|m| m[..m.len() - 1].to_vec())
            .collect()
    }

    /// The graph between `parent`'s direct children.
    fn scope(&self, parent: &[String]) -> Scope {
        let child = |m: &ModPath| {
            (m.len() > parent.len() && m.starts_with(parent)).then(|| m[parent.len()].clone())
        };
        let nodes: Vec<String> = self
            .modules
            .iter()
            .filter_map(child)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let index = |name: String| nodes.binary_search(&name).expect("a child");
        let mut succ = vec![BTreeSet::new(); nodes.len()];
        for (user, used) in &self.edges {
            if let (Some(a), Some(b)) = (child(user), child(used)) {
                if a != b {
                    succ[index(a)].insert(index(b));
                }
            }
        }
        let name = if parent.is_empty() {
            "crate".to_string()
        } else {
            parent.join("::")
        };
        Scope {
            name,
            succ: succ.into_iter().map(|s| s.into_iter().collect()).collect(),
            nodes,
        }
    }
}

/// Appends the `.rs` files under `dir`, sorted, to `out`.
fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            rs_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The module a file (relative to the crate's folder) holds: `lib.rs` (or `main.rs`) is the root,
/// `foo.rs` and `foo/mod.rs` are `foo`, `foo/bar.rs` is `foo::bar`.
fn module_path(file: &Path) -> ModPath {
    let mut path: ModPath = file
        .with_extension("")
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = path.last().map(String::as_str);
    if last == Some("mod") || (path.len() == 1 && matches!(last, Some("lib" | "main"))) {
        path.pop();
    }
    path
}

/// Every path the tokens of module `here` name through `crate::` (or `$crate::`), `super::` (one
/// or more) or `self::`, as a path from the crate root (without the `crate`); a group
/// (`crate::{a, b::c}`) gives one path per member. An inline module (`mod tests { use super::*; }`)
/// is a module below `here`: its `super` is `here`.
fn crate_paths(tokens: TokenStream, here: &[String]) -> Vec<ModPath> {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let after_path_sep = |i: usize| i >= 2 && is_path_sep(&tokens[i - 2..]);
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Ident(id) if id == "crate" && is_path_sep(&tokens[i + 1..]) => {
                i += 3 + follow_path(&tokens[i + 3..], Vec::new(), &mut out);
                continue;
            }
            TokenTree::Ident(id) if (id == "super" || id == "self") && is_path_sep(&tokens[i + 1..]) && !after_path_sep(i) => {
                let mut base = here.to_vec();
                if id == "super" {
                    base.pop();
                    i += 3;
                    while matches!(tokens.get(i), Some(TokenTree::Ident(id)) if id == "super") && is_path_sep(&tokens[i + 1..]) {
                        base.pop();
                        i += 3;
                    }
                } else {
                    i += 3;
                }
                i += follow_path(&tokens[i..], base, &mut out);
                continue;
            }
            TokenTree::Ident(id) if id == "mod" => {
                if let (Some(TokenTree::Ident(name)), Some(TokenTree::Group(body))) = (tokens.get(i + 1), tokens.get(i + 2)) {
                    if body.delimiter() == Delimiter::Brace {
                        let inner = [here, &[name.to_string()]].concat();
                        out.extend(crate_paths(body.stream(), &inner));
                        i += 3;
                        continue;
                    }
                }
            }
            TokenTree::Group(group) => out.extend(crate_paths(group.stream(), here)),
            _ => {}
        }
        i += 1;
    }
    out
}

/// Whether the tokens start with `::`.
fn is_path_sep(tokens: &[TokenTree]) -> bool {
    matches!(tokens, [TokenTree::Punct(a), TokenTree::Punct(b), ..]
        if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':')
}

/// Reads the rest of a path after `prefix::`, appending the paths it names to `out`; returns the
/// number of tokens read.
fn follow_path(tokens: &[TokenTree], mut prefix: ModPath, out: &mut Vec<ModPath>) -> usize {
    let mut i = 0;
    loop {
        match tokens.get(i) {
            Some(TokenTree::Ident(id)) if id != "self" => {
                prefix.push(id.to_string());
                i += 1;
                if !is_path_sep(&tokens[i..]) {
                    break;
                }
                i += 2;
            }
            Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace => {
                let members: Vec<TokenTree> = group.stream().into_iter().collect();
                for member in
                    members.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','))
                {
                    follow_path(member, prefix.clone(), out);
                }
                return i + 1;
            }
            _ => break,
        }
    }
    if !prefix.is_empty() {
        out.push(prefix);
    }
    i
}

/// The module a path names: its longest prefix that is a module (the root when none is).
fn resolve(modules: &BTreeSet<ModPath>, path: &[String]) -> ModPath {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
        .unwrap_or_default()
}

/// The strongly connected components of a graph (Tarjan), each sorted, in reverse topological order.
fn components(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    /// Tarjan's state.
    struct Tarjan<'a> {
        succ: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        /// Visits `v` and everything reachable from it not yet visited.
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in &self.succ[v] {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let at = self
                    .stack
                    .iter()
                    .rposition(|&w| w == v)
                    .expect("v is on the stack");
                let mut component = self.stack.split_off(at);
                component.iter().for_each(|&w| self.on_stack[w] = false);
                component.sort_unstable();
                self.out.push(component);
            }
        }
    }
    let n = succ.len();
    let mut t = Tarjan {
        succ,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.out
}

/// A shortest cycle inside `members` (a component of two or more nodes), as the nodes it visits
/// starting and ending at the same one; the first found among equally short ones.
fn shortest_cycle(succ: &[Vec<usize>], members: &[usize]) -> Vec<usize> {
    let inside: BTreeSet<usize> = members.iter().copied().collect();
    let mut best: Option<Vec<usize>> = None;
    for &start in members {
        // Breadth first from `start` back to it, within the component.
        let mut from: BTreeMap<usize, usize> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        'search: while let Some(v) = queue.pop_front() {
            for &w in succ[v].iter().filter(|w| inside.contains(w)) {
                if w == start {
                    let mut cycle = vec![v];
                    while let Some(&p) = from.get(cycle.last().expect("non-empty")) {
                        cycle.push(p);
                    }
                    cycle.reverse();
                    cycle.push(start);
                    if best.as_ref().is_none_or(|b| cycle.len() < b.len()) {
                        best = Some(cycle);
                    }
                    break 'search;
                }
                if let Entry::Vacant(entry) = from.entry(w) {
                    entry.insert(v);
                    queue.push_back(w);
                }
            }
        }
    }
    best.expect("a component of two or more nodes has a cycle")
}

/// Prints the report; returns the number of circles (components of two or more modules) found.
fn report(graph: &ModuleGraph, dir: &Path) -> usize {
    let top = graph.scope(&[]);
    let top_edges: usize = top.succ.iter().map(Vec::len).sum();
    println!(
        "{}: {} modules, {} edges between them ({} between the {} top-level modules)",
        dir.display(),
        graph.modules.len(),
        graph.edges.len(),
        top_edges,
        top.nodes.len()
    );
    let circles: usize = graph
        .parents()
        .iter()
        .map(|parent| report_scope(&graph.scope(parent)))
        .sum();
    report_fans(graph);
    circles
}

/// Prints one scope's circles and, for its largest, a shortest cycle; returns how many it has.
fn report_scope(scope: &Scope) -> usize {
    let mut circles: Vec<Vec<usize>> = components(&scope.succ)
        .into_iter()
        .filter(|c| c.len() > 1)
        .collect();
    circles.sort_by_key(|c| std::cmp::Reverse(c.len()));
    let names = |ids: &[usize]| {
        ids.iter()
            .map(|&i| scope.nodes[i].as_str())
            .collect::<Vec<_>>()
    };
    println!(
        "\n{} ({} modules): {} circle(s)",
        scope.name,
        scope.nodes.len(),
        circles.len()
    );
    for circle in &circles {
        println!("  circle of {}: {}", circle.len(), names(circle).join(", "));
    }
    if let Some(largest) = circles.first() {
        println!(
            "  for example: {}",
            names(&shortest_cycle(&scope.succ, largest)).join(" -> ")
        );
    }
    circles.len()
}

/// Prints each module's fan-out (modules it uses) and fan-in (modules using it), the ten with the
/// largest fan-out.
fn report_fans(graph: &ModuleGraph) {
    let mut fans: BTreeMap<&ModPath, (usize, usize)> =
        graph.modules.iter().map(|m| (m, (0, 0))).collect();
    for (user, used) in &graph.edges {
        fans.get_mut(user).expect("a module").0 += 1;
        fans.get_mut(used).expect("a module").1 += 1;
    }
    let mut fans: Vec<_> = fans.into_iter().collect();
    fans.sort_by_key(|(_, (out, _))| std::cmp::Reverse(*out));
    println!(
        "\n{:<28} {:>7} {:>6}",
        "module (top 10 by fan-out)", "fan-out", "fan-in"
    );
    for (module, (out, fan_in)) in fans.iter().take(10) {
        let name = if module.is_empty() {
            "crate".to_string()
        } else {
            module.join("::")
        };
        println!("{name:<28} {out:>7} {fan_in:>6}");
    }
}

/// Prints every edge as `user -> used`, grouped by user.
fn print_edges(graph: &ModuleGraph) {
    let name = |m: &ModPath| {
        if m.is_empty() {
            "crate".to_string()
        } else {
            m.join("::")
        }
    };
    println!("\nedges (user -> used):");
    for (user, used) in &graph.edges {
        println!("  {} -> {}", name(user), name(used));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paths a snippet names through `crate::`, joined with `::`.
    fn paths(source: &str) -> Vec<String> {
        paths_in("", source)
    }

    /// The paths a snippet of module `here` (`a::b` form) names, from the crate root.
    fn paths_in(here: &str, source: &str) -> Vec<String> {
        let tokens = TokenStream::from_str(source).expect("lexes");
        crate_paths(tokens, &m(here)).iter().map(|p| p.join("::")).collect()
    }

    /// A module path from `a::b` form.
    fn m(path: &str) -> ModPath {
        path.split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// A synthetic crate: `a` and `b` use each other, `c` uses `a` (no circle), and inside folder
    /// `d` the modules `inner` and `other` use each other.
    fn synthetic_crate() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-modules-{}", std::process::id()));
        let files = [
            (
                "lib.rs",
                "mod a; mod b; mod c; mod d; // crate::c\n#[path = \"../x.rs\"] mod x;",
            ),
            ("a.rs", "use crate::{b, d::inner::Thing};"),
            (
                "b.rs",
                "pub fn f() { crate::a::g(); let s = \"crate::c\"; }",
            ),
            (
                "c.rs",
                "use crate::a; /* crate::b::f */ pub(crate) fn h() {}",
            ),
            ("d/mod.rs", "pub mod inner; pub mod other;"),
            (
                "d/inner.rs",
                "use crate::d::other::X; fn y() { crate::x::z() }",
            ),
            (
                "d/other.rs",
                "pub fn x() { println!(\"{}\", super::inner::y()); }",
            ),
        ];
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn groups_self_and_dollar_crate() {
        assert_eq!(
            paths("use crate::{a, b::c, d::{self, e as f}};"),
            ["a", "b::c", "d", "d::e"]
        );
        assert_eq!(paths("$crate::log::wanted($level)"), ["log::wanted"]);
        assert_eq!(paths("crate::a::B::<T>::new()"), ["a::B"]);
    }

    #[test]
    fn super_and_self_paths_are_followed_from_the_module_they_are_in() {
        let source = "use super::c::X; use super::{d, e::F}; fn f() { super::super::g::h(); self::i::j(); a::super_x(); }\n\
                      pub(super) fn k() {} mod tests { use super::*; use super::super::l; }";
        assert_eq!(paths_in("a::b", source), ["a::c::X", "a::d", "a::e::F", "g::h", "a::b::i::j", "a::b", "a::l"]);
    }

    #[test]
    fn comments_strings_and_visibility_do_not_count() {
        let source = "// crate::a\n/// crate::b\n/* crate::c */ pub(crate) fn f() { \"crate::d\"; r#\"crate::e\"# }";
        assert!(paths(source).is_empty());
    }

    #[test]
    fn module_paths_of_files() {
        assert_eq!(module_path(Path::new("lib.rs")), m(""));
        assert_eq!(module_path(Path::new("foo.rs")), m("foo"));
        assert_eq!(module_path(Path::new("foo/mod.rs")), m("foo"));
        assert_eq!(module_path(Path::new("foo/bar.rs")), m("foo::bar"));
    }

    /// The loader's runtime is laid out in stages with every dependency pointing one way
    /// (docs/architecture.md, "The runtime's stages"): no circle of modules at the top level or inside a folder.
    #[test]
    fn the_loader_has_no_circle_of_modules() {
        let graph = ModuleGraph::read(&crate::repo_root().join("loader/src")).unwrap();
        for parent in graph.parents() {
            let scope = graph.scope(&parent);
            let circles: Vec<Vec<&str>> = components(&scope.succ)
                .into_iter()
                .filter(|c| c.len() > 1)
                .map(|c| c.iter().map(|&i| scope.nodes[i].as_str()).collect())
                .collect();
            assert!(circles.is_empty(), "circles of modules in {}: {circles:?} (cargo xtask modules)", scope.name);
        }
    }

    #[test]
    fn edges_circles_and_check_of_a_synthetic_crate() {
        let dir = synthetic_crate();
        let graph = ModuleGraph::read(&dir).unwrap();
        let edges: Vec<(String, String)> = graph
            .edges
            .iter()
            .map(|(a, b)| (a.join("::"), b.join("::")))
            .collect();
        let expected = [
            ("a", "b"),
            ("a", "d::inner"),
            ("b", "a"),
            ("c", "a"),
            ("d::inner", ""),
            ("d::inner", "d::other"),
            ("d::other", "d::inner"),
        ];
        assert_eq!(edges, expected.map(|(a, b)| (a.to_string(), b.to_string())));

        let top = graph.scope(&[]);
        assert_eq!(top.nodes, ["a", "b", "c", "d"]);
        let circles: Vec<Vec<usize>> = components(&top.succ)
            .into_iter()
            .filter(|c| c.len() > 1)
            .collect();
        assert_eq!(circles, [vec![0, 1]]);
        assert_eq!(shortest_cycle(&top.succ, &circles[0]), [0, 1, 0]);

        let d = graph.scope(&m("d"));
        assert_eq!(
            (d.name.as_str(), d.nodes.as_slice()),
            ("d", ["inner", "other"].map(String::from).as_slice())
        );
        assert_eq!(
            components(&d.succ)
                .into_iter()
                .filter(|c| c.len() > 1)
                .count(),
            1
        );
        assert_eq!(graph.parents(), BTreeSet::from([m(""), m("d")]));

        let args = |check: &str| [format!("--crate={}", dir.display()), check.to_string()];
        assert!(main(&args("--check")).is_err());
        std::fs::write(dir.join("b.rs"), "").unwrap();
        std::fs::write(dir.join("d/other.rs"), "").unwrap();
        assert!(main(&args("--check")).is_ok());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn shortest_cycle_in_a_larger_component() {
        // 0 -> 1 -> 2 -> 3 -> 0 and 2 -> 0: the shortest cycle is 0 -> 1 -> 2 -> 0.
        let succ = vec![vec![1], vec![2], vec![0, 3], vec![0]];
        assert_eq!(components(&succ), [vec![0, 1, 2, 3]]);
        assert_eq!(shortest_cycle(&succ, &[0, 1, 2, 3]), [0, 1, 2, 0]);
    }
}
