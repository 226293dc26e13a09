-- lib/redis/lua/weak_clear.lua - clear the weak notifications of cell
-- NP at or below upto8, and its failure record (store.h's weak_clear);
-- newer notifications and pending records stay.  Timestamps are
-- inverted in keys, so those at or below upto8 come from its key on.
-- ARGV: NP, upto8.  KEYS: the bucket's four (common.lua).  Returns {0}.
local NP, upto8 = ARGV[1], ARGV[2]

local keys = redis.call('ZRANGEBYLEX', KEYS[1],
    '[' .. NP .. '\5' .. inv8(upto8), '(' .. NP .. '\6')
for i = 1, #keys do
	del(keys[i])
end
del(NP .. '\6' .. FF8)
return {0}
