#!/usr/bin/env python3
"""Step 1 of the routing student table (see README.md beside this file): gathers the training
pairs (input text, English text) from what Debian ships, into OUT/targets.txt (unique English
texts, one per line) and OUT/pairs.tsv (lang, target line number, input text).

Sources (all offline; see SOURCES.md): Debian's translated package descriptions (apt lists fetched
with Acquire::Languages), gettext catalogues under /usr/share/locale, FreeDict bilingual
dictionaries and WordNet (unpacked from `apt-get download`ed .deb files into DEBS_ROOT).
Deterministic: the same inputs give the same files (seeded sampling, sorted iteration).
"""
import glob, gzip, os, random, re, struct, subprocess, sys, unicodedata
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

mo_codes = {'de': ['de'], 'fr': ['fr'], 'es': ['es'], 'it': ['it'], 'pt': ['pt_BR', 'pt'], 'ja': ['ja'], 'zh': ['zh_CN'], 'ko': ['ko'], 'ru': ['ru'], 'nl': ['nl'], 'pl': ['pl']}
PER_LANG_MO = 4000
for lang in LANGS:
    found = []
    for code in mo_codes[lang]:
        for f in sorted(glob.glob(f'/usr/share/locale/{code}/LC_MESSAGES/*.mo')):
            for mid, mstr in mo_pairs(f):
                a, b = ui(mid), ui(mstr)
                if re.search(r'[A-Za-z]{3}', a) and 1 <= len(a.split()) <= 25 and a != b: found.append((b, a))
    found = sorted(set(found)); rng.shuffle(found)
    for b, a in found[:PER_LANG_MO]: add(lang, b, a)

# English word frequencies from WordNet's glosses and examples (general-domain English): the
# dictionary entries kept are those of common English words, not of the package texts' jargon.
wn = []
for f in sorted(glob.glob(f'{DEBS_ROOT}/usr/share/wordnet/data.*')):
    for line in open(f, encoding='utf8', errors='replace'):
        if line.startswith('  ') or '|' not in line: continue
        g = line.split('|', 1)[1].strip()
        for ex in re.findall(r'"([^"]{12,200})"', g): wn.append(ex)
        d = g.split(';')[0].strip()
        if len(d) > 10: wn.append(d)
wn = sorted(set(wn)); rng.shuffle(wn)
en_freq = Counter(w.lower() for t in wn for w in re.findall(r'[A-Za-z]+', t))
gloss_freq = lambda g: min((en_freq[w.lower()] for w in re.findall(r'[A-Za-z]+', g)), default=0)

# 3. FreeDict: headword → first English sense, for the words most frequent in that language's text above.
def dictd(name):
    idx = f'{DEBS_ROOT}/usr/share/dictd/freedict-{name}.index'
    if not os.path.exists(idx): return []
    body = gzip.open(f'{DEBS_ROOT}/usr/share/dictd/freedict-{name}.dict.dz').read().decode('utf8', 'replace')
    b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
    num = lambda s: sum(b64.index(c) * 64 ** i for i, c in enumerate(reversed(s)))
    out = []
    for line in open(idx, encoding='utf8', errors='replace'):
        parts = line.rstrip('\n').split('\t')
        if len(parts) != 3 or parts[0].startswith('00database'): continue
        out.append((parts[0], body[num(parts[1]): num(parts[1]) + num(parts[2])]))
    return out

def gloss(entry):
    for line in entry.split('\n')[1:]:
        l = line.strip()
        if not l or re.match(r'^(Note|see|Synonym|Antonym|Plural|Example)', l, re.I): continue
        l = re.sub(r'/[^/]*/|\([^)]*\)|\{[^}]*\}|\[[^\]]*\]|<[^>]*>|^\d+\.\s*', ' ', l)
        l = clean(l).strip(' ,;')
        if re.search(r'[A-Za-z]{2}', l) and not re.search(r'[\u3040-\u30ff\u4e00-\u9fff]', l):
            return ', '.join(x.strip() for x in l.split(',')[:2] if x.strip())
    return None

lang_text = {l: Counter() for l in LANGS}
for lang, _, src in pairs:
    if lang in lang_text: lang_text[lang].update(w.lower() for w in re.findall(r'\w+', src))
PER_LANG_DICT = 10000
# Japanese is written without spaces: a headword's frequency is that of the same character run in the text.
ja_grams = Counter(src[i:i + n] for lang, _, src in pairs if lang == 'ja' for n in (1, 2, 3, 4) for i in range(len(src) - n + 1))
for lang, name in [('de', 'deu-eng'), ('fr', 'fra-eng'), ('es', 'spa-eng'), ('it', 'ita-eng'), ('pt', 'por-eng'), ('nl', 'nld-eng'), ('pl', 'pol-eng'), ('ja', 'jpn-eng')]:
    scored = []
    for head, entry in dictd(name):
        g = gloss(entry)
        word = head.split(',')[0].strip()
        if not g or not word or len(word.split()) > 2: continue
        freq = lang_text[lang][word.lower()] if lang != 'ja' else ja_grams[word]
        scored.append((-(gloss_freq(g) + freq), word, g))
    scored.sort()
    for _, word, g in scored[:PER_LANG_DICT]: add(lang, word, g)
for lang, name in [('de', 'eng-deu'), ('fr', 'eng-fra'), ('es', 'eng-spa'), ('it', 'eng-ita'), ('pt', 'eng-por'), ('ru', 'eng-rus'), ('ja', 'eng-jpn')]:
    items = sorted(dictd(name), key=lambda e: (-en_freq[e[0].lower()], e[0]))
    n = 0
    for head, entry in items:
        if len(head.split()) > 2 or not re.match(r'^[A-Za-z]', head): continue
        lines = [clean(re.sub(r'/[^/]*/|\([^)]*\)|\{[^}]*\}|\[[^\]]*\]|<[^>]*>|^\d+\.\s*', ' ', l)) for l in entry.split('\n')[1:]]
        tr = next((l.split(',')[0].strip() for l in lines if l and not re.match(r'^(Note|see|Synonym)', l)), None)
        if tr: add(lang, tr, head); n += 1
        if n >= 5000: break

# 4. WordNet glosses and example sentences as English inputs (closer to how people write than package text).
for s_ in wn[:100000]: add('en', s_, s_)

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
print(f'{len(targets)} English targets, {len(pairs)} pairs:', dict(sorted(by.items())))
