#!/usr/bin/env python3
"""Step 1 of the routing student table (see README.md beside this file): gathers the training
pairs (input text, English text) from what Debian ships, into OUT/targets.txt (unique English
texts, one per line) and OUT/pairs.tsv (lang, target line number, input text).

Sources (all offline; see SOURCES.md): Debian's translated package descriptions (apt lists fetched
with Acquire::Languages), gettext catalogues under /usr/share/locale, and WordNet (unpacked from an
`apt-get download`ed .deb into DEBS_ROOT) and Unicode CLDR (same). svc is MIT, so only texts under permissive licences are
used (licences.py): package descriptions and catalogues of installed packages whose copyright file
names permissive licences alone. No dictionaries: the FreeDict ones are GPL.
Deterministic: the same inputs give the same files (seeded sampling, sorted iteration).
"""
import glob, os, random, re, struct, subprocess, sys, unicodedata
from licences import mo_package, package_licence
from collections import Counter

OUT = sys.argv[1] if len(sys.argv) > 1 else '/tmp/rcorp/out'
DEBS_ROOT = sys.argv[2] if len(sys.argv) > 2 else '/tmp/rcorp/x'
# A private lists folder: apt-get update -o Dir::State::Lists=LISTS -o Acquire::Languages=en,de,fr,... (README.md)
LISTS = os.environ.get('LISTS', '/tmp/rcorp/lists')
LANGS = ['de', 'fr', 'es', 'it', 'pt', 'ja', 'zh', 'ko', 'ru', 'nl', 'pl']
rng = random.Random(26)
os.makedirs(OUT, exist_ok=True)

targets, target_id, pairs = [], {}, []

def clean(s):
    s = unicodedata.normalize('NFKC', s).replace('\t', ' ')
    return re.sub(r'\s+', ' ', s).strip()

def add(lang, src, en):
    src, en = clean(src), clean(en)
    if len(src) < 2 or len(en) < 2 or len(en) > 400 or len(src) > 400: return
    if en not in target_id:
        target_id[en] = len(targets); targets.append(en)
    pairs.append((lang, target_id[en], src))

def first_sentences(par, limit=300):
    out = ''
    for s in re.split(r'(?<=[.!?。])\s+', par):
        if out and len(out) + len(s) > limit: break
        out = (out + ' ' + s).strip()
    return out[:limit]

# 1. Debian package descriptions: summary line and first paragraph, paired by Description-md5.
def translations(code):
    files = sorted(glob.glob(f'{LISTS}/*bookworm_main_i18n_Translation-{code}.lz4'))
    out = {}
    for f in files:
        text = subprocess.run(['lz4', '-dc', f], capture_output=True, check=True).stdout.decode('utf8', 'replace')
        for block in text.split('\n\n'):
            m = re.search(r'^Description-md5: (\w+)\n', block, re.M)
            pkg = re.search(r'^Package: (\S+)', block, re.M)
            if not pkg or not package_licence(pkg.group(1))[0]: continue
            d = re.search(r'^Description-(?!md5)[\w_]+: (.*)\n((?: .*\n?)*)', block, re.M)
            if not m or not d: continue
            paras = [clean(' '.join(l.strip() for l in p.split('\n'))) for p in re.split(r'\n \.\n', d.group(2))]
            out[m.group(1)] = (d.group(1), [p for p in paras if p])
    return out

english = translations('en')
deb_codes = {'de': ['de'], 'fr': ['fr'], 'es': ['es'], 'it': ['it'], 'pt': ['pt_BR', 'pt', 'pt%5fBR'], 'ja': ['ja'], 'zh': ['zh_CN', 'zh%5fCN'], 'ko': ['ko'], 'ru': ['ru'], 'nl': ['nl'], 'pl': ['pl']}
PER_LANG_DEB = 5000
for lang in LANGS:
    got = {}
    for code in deb_codes[lang]: got.update(translations(code))
    keys = sorted(k for k in got if k in english)
    rng.shuffle(keys)
    for k in keys[:PER_LANG_DEB]:
        (es, ep), (ts, tp) = english[k], got[k]
        add(lang, ts, es)
        if ep and tp and len(ep) == len(tp): add(lang, first_sentences(tp[0]), first_sentences(ep[0]))
en_keys = sorted(english); rng.shuffle(en_keys)
for k in en_keys[:6000]:
    s, p = english[k]
    add('en', s, s)
    if p: add('en', first_sentences(p[0]), first_sentences(p[0]))

sections = [('package descriptions', len(pairs))]

# 2. gettext catalogues: msgid (English) ↔ msgstr, interface strings of installed packages.
def mo_pairs(path):
    data = open(path, 'rb').read()
    if len(data) < 28: return []
    magic = struct.unpack('<I', data[:4])[0]
    e = '<' if magic == 0x950412de else '>'
    _, n, oo, to = struct.unpack(e + '4I', data[4:20])
    out = []
    for i in range(n):
        ol, oo_ = struct.unpack(e + '2I', data[oo + 8 * i: oo + 8 * i + 8])
        tl, to_ = struct.unpack(e + '2I', data[to + 8 * i: to + 8 * i + 8])
        mid = data[oo_: oo_ + ol].split(b'\0')[0].decode('utf8', 'replace')
        mstr = data[to_: to_ + tl].split(b'\0')[0].decode('utf8', 'replace')
        if mid and mstr and '\x04' not in mid: out.append((mid, mstr))
    return out

def ui(s):
    s = re.sub(r'%[-+ #0-9.]*[a-zA-Z]|\{[^}]*\}|\$\{[^}]*\}|<[^>]+>|[&_](?=\w)', ' ', s)
    return clean(s)

mo_owner = mo_package()
mo_codes = {'de': ['de'], 'fr': ['fr'], 'es': ['es'], 'it': ['it'], 'pt': ['pt_BR', 'pt'], 'ja': ['ja'], 'zh': ['zh_CN'], 'ko': ['ko'], 'ru': ['ru'], 'nl': ['nl'], 'pl': ['pl']}
PER_LANG_MO = 4000
for lang in LANGS:
    found = []
    for code in mo_codes[lang]:
        for f in sorted(glob.glob(f'/usr/share/locale/{code}/LC_MESSAGES/*.mo')):
            if f not in mo_owner or not package_licence(mo_owner[f])[0]: continue
            for mid, mstr in mo_pairs(f):
                a, b = ui(mid), ui(mstr)
                if re.search(r'[A-Za-z]{3}', a) and 1 <= len(a.split()) <= 25 and a != b: found.append((b, a))
    found = sorted(set(found)); rng.shuffle(found)
    for b, a in found[:PER_LANG_MO]: add(lang, b, a)

# WordNet's glosses and examples (general-domain English).
wn = []
for f in sorted(glob.glob(f'{DEBS_ROOT}/usr/share/wordnet/data.*')):
    for line in open(f, encoding='utf8', errors='replace'):
        if line.startswith('  ') or '|' not in line: continue
        g = line.split('|', 1)[1].strip()
        for ex in re.findall(r'"([^"]{12,200})"', g): wn.append(ex)
        d = g.split(';')[0].strip()
        if len(d) > 10: wn.append(d)
wn = sorted(set(wn)); rng.shuffle(wn)

sections.append(('gettext catalogues', len(pairs)))

# 3. Unicode CLDR (Debian `unicode-cldr-core`, Unicode licence): everyday words in every language,
# aligned by key. Emoji names and keywords (an emoji's keywords in a language with the English
# name: "Abflug", "Flugzeug" with "airplane departure"), and country, language and date words
# ("morgen", "la semana próxima").
CLDR = os.environ.get('CLDR', f'{DEBS_ROOT}/usr/share/unicode/cldr/common')
cldr_codes = {'de': 'de', 'fr': 'fr', 'es': 'es', 'it': 'it', 'pt': 'pt', 'ja': 'ja', 'zh': 'zh', 'ko': 'ko', 'ru': 'ru', 'nl': 'nl', 'pl': 'pl'}
unescape = lambda t: t.replace('&amp;', '&').replace('&lt;', '<').replace('&gt;', '>').replace('&quot;', '"').replace('&apos;', "'")

def annotations(code):
    path = f'{CLDR}/annotations/{code}.xml'
    if not os.path.exists(path): return {}
    out = {}
    for cp, tts, body in re.findall(r'<annotation cp="([^"]+)"( type="tts")?>([^<]*)</annotation>', open(path, encoding='utf8').read()):
        out.setdefault(cp, {})['tts' if tts else 'keys'] = [unescape(k.strip()) for k in body.split('|') if k.strip()]
    return out

def main_names(code):
    path = f'{CLDR}/main/{code}.xml'
    if not os.path.exists(path): return {}
    xml = open(path, encoding='utf8').read()
    out = {}
    for kind in ('territory', 'language'):
        for t, name in re.findall(rf'<{kind} type="([^"]+)">([^<]+)</{kind}>', xml): out[(kind, t)] = unescape(name)
    for ftype, body in re.findall(r'<field type="(\w+)">(.*?)</field>', xml, re.S):
        name = re.search(r'<displayName>([^<]+)</displayName>', body)
        if name: out[('field', ftype)] = unescape(name.group(1))
        for rel, word in re.findall(r'<relative type="(-?\d)">([^<]+)</relative>', body): out[('relative', ftype, rel)] = unescape(word)
    return out

en_ann, en_main = annotations('en'), main_names('en')
for lang in LANGS:
    ann = annotations(cldr_codes[lang])
    for cp in sorted(ann):
        en = en_ann.get(cp, {})
        if not en.get('tts'): continue
        if ann[cp].get('tts'): add(lang, ann[cp]['tts'][0], en['tts'][0])
        if ann[cp].get('keys') and en.get('keys'): add(lang, ', '.join(ann[cp]['keys']), ', '.join(en['keys']))
        for k in ann[cp].get('keys', [])[:3]: add(lang, k, en['tts'][0])
    names = main_names(cldr_codes[lang])
    for key in sorted(names):
        if key in en_main: add(lang, names[key], en_main[key])

sections.append(('CLDR', len(pairs)))

# 4. WordNet glosses and example sentences as English inputs (closer to how people write than package text).
for s_ in wn[:100000]: add('en', s_, s_)

sections.append(('WordNet', len(pairs)))

# 5. Every English text is also an input for itself (dictionary glosses and interface strings
# teach the English words; the teacher vectors are already there).
self_paired = {tid for lang, tid, src in pairs if lang == 'en'}
for tid, t in enumerate(list(targets)):
    if tid not in self_paired: pairs.append(('en', tid, t))

with open(f'{OUT}/targets.txt', 'w', encoding='utf8') as f:
    for t in targets: f.write(t.replace('\n', ' ') + '\n')
with open(f'{OUT}/pairs.tsv', 'w', encoding='utf8') as f:
    for lang, tid, src in pairs: f.write(f'{lang}\t{tid}\t{src}\n')
by = Counter(l for l, _, _ in pairs)
print('pairs per source:', ', '.join(f'{name} {n - (sections[i - 1][1] if i else 0)}' for i, (name, n) in enumerate(sections)))
print(f'{len(targets)} English targets, {len(pairs)} pairs:', dict(sorted(by.items())))
