-- lib/redis/lua/range.lua - one page of a walk: the keys of the sorted set
-- KEYS[1] between ARGV[1] and ARGV[2] (ZRANGEBYLEX bounds), at most
-- ARGV[3] of them, each followed by its value in KEYS[2] when ARGV[4]
-- is '1' (false when the value is missing), in one atomic look.
-- KEYS, of one bucket: its codec keys or its lock keys (common.lua's
-- KEYS[1] or KEYS[3]), then its hash of values.
local keys = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], ARGV[2],
    'LIMIT', 0, tonumber(ARGV[3]))
if ARGV[4] ~= '1' then
	return keys
end
local out = {}
for i = 1, #keys do
	out[2 * i - 1] = keys[i]
	out[2 * i] = redis.call('HGET', KEYS[2], keys[i])
end
return out
