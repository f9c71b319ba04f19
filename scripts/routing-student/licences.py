"""Which Debian packages' texts may train the routing student table (svc is MIT): a package is kept
only when its machine-readable copyright file (/usr/share/doc/<pkg>/copyright, DEP-5) names
permissive licences alone. A `License:` expression is acceptable when every part joined by "and"
has at least one permissive alternative joined by "or" (so "GPL-2+ or Expat" is kept, "GPL-2+" and
"LGPL-2.1+" are not). Files that are not DEP-5, or name a licence not listed here, are left out:
unknown counts as not allowed.
"""
import glob, os, re

PERMISSIVE = re.compile(r'^(expat|mit(-\w+)?|x11|bsd(-[234](-?clause)?)?(-\w+)?|isc|apache-2(\.0)?|zlib|postgresql|'
                        r'public-domain|cc0(-1\.0)?|unicode(-\w+)?|bsl-1\.0|boost(-1\.0)?|curl|unlicense|psf(-2)?|'
                        r'fsfap|fsfullr|fsful|permissive|hpnd|ntp|sgi(-b-2\.0)?|wtfpl|0bsd|'
                        # Custom notices read in PostgreSQL's copyright file (its catalogues are the largest
                        # permissive ones on the machine): each grants use, copying and redistribution.
                        r'custom-pg_dump|custom-unicode|custom-regex|tcl|nagaysau-ishii|double-metaphone)$', re.I)

def acceptable(expr):
    expr = re.sub(r'\bwith\b.*?exception', '', expr.strip(), flags=re.I)
    if not expr: return False
    for conj in re.split(r'\s+and\s+|\s*&\s*', expr):
        alts = [a.strip(' ()').lower() for a in re.split(r'\s+or\s+|\s*\|\s*', conj)]
        if not any(PERMISSIVE.match(a) for a in alts): return False
    return True

_cache = {}
def package_licence(pkg, doc_root='/usr/share/doc'):
    """(allowed, [licence expressions]) for an installed package."""
    if pkg in _cache: return _cache[pkg]
    path = f'{doc_root}/{pkg}/copyright'
    result = (False, ['no copyright file'])
    if os.path.exists(path):
        text = open(path, encoding='utf8', errors='replace').read()
        if re.match(r'^Format:', text, re.M) or 'copyright-format' in text:
            names = sorted(set(m.strip() for m in re.findall(r'^License:[ \t]*(.*)$', text, re.M)))
            result = (bool(names) and all(acceptable(n) for n in names), names)
        else:
            result = (False, ['not machine-readable'])
    _cache[pkg] = result
    return result

def mo_package(info_root='/var/lib/dpkg/info'):
    """Installed file path -> owning package, for gettext catalogues."""
    owner = {}
    for lst in sorted(glob.glob(f'{info_root}/*.list')):
        pkg = os.path.basename(lst)[:-5].split(':')[0]
        for line in open(lst, encoding='utf8', errors='replace'):
            line = line.rstrip('\n')
            if line.endswith('.mo'): owner[line] = pkg
    return owner
