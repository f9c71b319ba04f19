/**
 * The Lua scripts of the Redis cache (redis.ts): every change of several counters and a sorted
 * set's member is one script run, so replicas never see half of one.
 */

/**
 * Seeds, checks and adds counter lines in one step, then records or removes a sorted-set member.
 * `one(ks, text, member, replaced)` applies a call whose keys are `ks` (the n counters, then the
 * set) and whose three arguments are the others: the call's numbers and words as one
 * comma-separated text (n; then amount, limit ('' none), ttl (0 none) and seed ('' none, 'must'
 * the counter must exist) per line; then op ('add' | 'addall' | 'swap' | 'rem' | 'remreq' | 'remall' | 'remallreq' | '')
 * and score), the member, the replaced member. None of the packed fields can hold a comma;
 * members may hold any text. One text instead of some twenty arguments: the client encodes each
 * argument of a command on its own (redis.ts says why that matters). 'remreq'
 * changes nothing (reply {2}) unless the member is in the set, 'swap' nothing (reply {3}) unless
 * the replaced member is, and then puts the member in its place; 'addall' adds each line of the
 * member text (several holds reserved ahead), 'remall' removes each ('remallreq': nothing changes,
 * reply {2}, unless every one is in the set); a 'must' line whose counter does not exist changes
 * nothing (reply {4, missing line indexes from 0…}).
 * Seeding is sequential (like the memory cache) so a key named twice is seeded once.
 */
const ONE = `
-- The next piece of a call's data from pos: '<bytes>:<text>' (any text, newlines included); and where the one after starts.
local function piece(data, pos)
  local colon = string.find(data, ':', pos, true)
  local n = tonumber(string.sub(data, pos, colon - 1))
  return string.sub(data, colon + 1, colon + n), colon + n + 1
end

local function fields(text)
  local out, i = {}, 1
  for f in string.gmatch(text .. ',', '([^,]*),') do
    out[i] = f
    i = i + 1
  end
  return out
end

local function one(ks, text, member, replaced)
  local a = fields(text)
  local n = tonumber(a[1])
  local op, score = a[n * 4 + 2], a[n * 4 + 3]
  local set = ks[n + 1]
  if op == 'remreq' and not redis.call('ZSCORE', set, member) then return {2} end
  if op == 'remallreq' then
    for m in string.gmatch(member, '[^\\n]+') do
      if not redis.call('ZSCORE', set, m) then return {2} end
    end
  end
  if op == 'swap' and not redis.call('ZSCORE', set, replaced) then return {3} end
  -- One GET a counter tells both whether a 'must' counter exists and its value (an EXISTS before
  -- the GET and another before each INCRBY were most of a call's Redis commands).
  local got, missing = {}, {4}
  for i = 1, n do
    got[i] = redis.call('GET', ks[i])
    if not got[i] and a[(i - 1) * 4 + 5] == 'must' then missing[#missing + 1] = i - 1 end
  end
  if #missing > 1 then return missing end
  -- seeded[key]: seeded by an earlier line of this call, which a later line then reads.
  local cur, seeded = {}, {}
  for i = 1, n do
    local b = (i - 1) * 4 + 1
    local k = ks[i]
    local ttl, seed = tonumber(a[b + 3]), a[b + 4]
    local v = seeded[k] or got[i]
    if v then
      cur[i] = tonumber(v)
    elseif seed ~= '' and seed ~= 'must' then
      if ttl > 0 then redis.call('SET', k, seed, 'PX', ttl) else redis.call('SET', k, seed) end
      seeded[k] = seed
      cur[i] = tonumber(seed)
    else
      cur[i] = 0
    end
  end
  for i = 1, n do
    local b = (i - 1) * 4 + 1
    local limit = a[b + 2]
    if limit ~= '' and cur[i] + tonumber(a[b + 1]) > tonumber(limit) then
      return {0, i - 1, cur[i], redis.call('PTTL', ks[i])}
    end
  end
  -- A counter this call creates (absent, not seeded: a seed was SET with its expiry) gets its
  -- expiry once, at its first INCRBY.
  local out, created = {1}, {}
  for i = 1, n do
    local b = (i - 1) * 4 + 1
    local k = ks[i]
    local ttl = tonumber(a[b + 3])
    local fresh = not got[i] and not seeded[k] and not created[k]
    out[i + 1] = redis.call('INCRBY', k, a[b + 1])
    if fresh then
      created[k] = true
      if ttl > 0 then redis.call('PEXPIRE', k, ttl) end
    end
  end
  if op == 'swap' then redis.call('ZREM', set, replaced) end
  if op == 'addall' then
    for m in string.gmatch(member, '[^\\n]+') do redis.call('ZADD', set, score, m) end
  elseif op == 'add' or op == 'swap' then redis.call('ZADD', set, score, member)
  elseif op == 'rem' or op == 'remreq' then redis.call('ZREM', set, member)
  elseif op == 'remall' or op == 'remallreq' then
    for m in string.gmatch(member, '[^\\n]+') do redis.call('ZREM', set, m) end
  end
  return out
end
`;

/**
 * One call; its set key is always given (a placeholder when there is no set op). ARGV[1]: its three
 * arguments as pieces ('<bytes>:<text>' each, see `piece`), so the client sends one argument.
 */
export const APPLY = `${ONE}
local text, pos = piece(ARGV[1], 1)
local member, replaced
member, pos = piece(ARGV[1], pos)
replaced = piece(ARGV[1], pos)
return one(KEYS, text, member, replaced)`;

/**
 * ARGV[1] calls, one after another, their replies in order. ARGV[3] holds every call's data as
 * pieces: its keys as places in KEYS (`2,3,1`), where each key is named once for all calls, then
 * its three arguments as APPLY reads them. ARGV[2] 'codes': a call that applied answers its code
 * alone ({1}, or {2} for a required member that was gone), without the counters' values nobody
 * reads (a group's settles). A call that raises an error (a key of another type under the prefix)
 * gets {5, message} and fails alone, as it would have as its own script run; the calls after it
 * still run.
 */
export const APPLY_EACH = `${ONE}
local data, codes, pos, out = ARGV[3], ARGV[2] == 'codes', 1, {}
for c = 1, tonumber(ARGV[1]) do
  local refs, text, member, replaced
  refs, pos = piece(data, pos)
  text, pos = piece(data, pos)
  member, pos = piece(data, pos)
  replaced, pos = piece(data, pos)
  local ks = {}
  for place in string.gmatch(refs, '%d+') do ks[#ks + 1] = KEYS[tonumber(place)] end
  local ok, reply = pcall(one, ks, text, member, replaced)
  if not ok then out[c] = {5, type(reply) == 'table' and tostring(reply.err) or tostring(reply)}
  elseif codes and reply[1] == 1 then out[c] = {1}
  else out[c] = reply end
end
return out`;
