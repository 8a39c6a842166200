//! `depends` expressions: `A+B` (all of), `A,B` (any of), parentheses for grouping.

use crate::ir::Depends;

/// Parses an expression. `+` binds tighter than `,`; the registry parenthesises mixed expressions.
pub fn parse(text: &str) -> Result<Depends, String> {
    let mut parser = Parser { text: text.as_bytes(), pos: 0 };
    let expr = parser.any()?;
    if parser.pos != parser.text.len() {
        return Err(format!("unexpected `{}` at offset {}", parser.text[parser.pos] as char, parser.pos));
    }
    Ok(expr)
}

/// `All` of the given terms, without a needless wrapper for one term.
pub fn all(mut terms: Vec<Depends>) -> Depends {
    if terms.len() == 1 { terms.pop().expect("one term") } else { Depends::All(terms) }
}

fn any(mut terms: Vec<Depends>) -> Depends {
    if terms.len() == 1 { terms.pop().expect("one term") } else { Depends::Any(terms) }
}

/// The expression as a disjunction of conjunctions: each inner list is one way to satisfy it.
/// Names in each conjunction are sorted and deduplicated; the outer list too.
pub fn to_dnf(expr: &Depends) -> Vec<Vec<String>> {
    let mut out = match expr {
        Depends::Name(n) => vec![vec![n.clone()]],
        Depends::Any(terms) => terms.iter().flat_map(to_dnf).collect(),
        Depends::All(terms) => terms.iter().fold(vec![vec![]], |acc, term| {
            let alternatives = to_dnf(term);
            acc.iter()
                .flat_map(|left| alternatives.iter().map(move |right| [left.clone(), right.clone()].concat()))
                .collect()
        }),
    };
    for conj in &mut out {
        conj.sort();
        conj.dedup();
    }
    out.sort();
    out.dedup();
    out
}

/// Writes the expression back in registry syntax, parenthesising nested groups.
pub fn to_string(expr: &Depends) -> String {
    fn go(e: &Depends, nested: bool) -> String {
        match e {
            Depends::Name(n) => n.clone(),
            Depends::All(t) | Depends::Any(t) => {
                let sep = if matches!(e, Depends::All(_)) { "+" } else { "," };
                let inner: Vec<String> = t.iter().map(|x| go(x, true)).collect();
                if nested { format!("({})", inner.join(sep)) } else { inner.join(sep) }
            }
        }
    }
    go(expr, false)
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn any(&mut self) -> Result<Depends, String> {
        let mut terms = vec![self.all()?];
        while self.eat(b',') {
            terms.push(self.all()?);
        }
        Ok(any(terms))
    }

    fn all(&mut self) -> Result<Depends, String> {
        let mut terms = vec![self.atom()?];
        while self.eat(b'+') {
            terms.push(self.atom()?);
        }
        Ok(all(terms))
    }

    fn atom(&mut self) -> Result<Depends, String> {
        if self.eat(b'(') {
            let inner = self.any()?;
            if !self.eat(b')') {
                return Err(format!("missing `)` at offset {}", self.pos));
            }
            return Ok(inner);
        }
        let start = self.pos;
        while self.pos < self.text.len()
            && (self.text[self.pos].is_ascii_alphanumeric() || self.text[self.pos] == b'_' || self.text[self.pos] == b':')
        {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(format!("expected a name at offset {start}"));
        }
        Ok(Depends::Name(String::from_utf8_lossy(&self.text[start..self.pos]).into_owned()))
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.text.get(self.pos) == Some(&c);
        if hit {
            self.pos += 1;
        }
        hit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_flattens() {
        let e = parse("(VK_KHR_get_physical_device_properties2+VK_KHR_surface),VK_VERSION_1_1").unwrap();
        assert_eq!(
            to_dnf(&e),
            vec![
                vec!["VK_KHR_get_physical_device_properties2".to_string(), "VK_KHR_surface".to_string()],
                vec!["VK_VERSION_1_1".to_string()],
            ]
        );
        assert_eq!(to_string(&e), "(VK_KHR_get_physical_device_properties2+VK_KHR_surface),VK_VERSION_1_1");
        let e = parse("A+(B,C)").unwrap();
        assert_eq!(to_dnf(&e), vec![vec!["A".to_string(), "B".to_string()], vec!["A".to_string(), "C".to_string()]]);
        assert!(parse("A+").is_err());
        assert!(parse("(A").is_err());
        assert!(parse("A)").is_err());
    }
}
