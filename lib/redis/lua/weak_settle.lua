-- lib/redis/lua/weak_settle.lua - settle a weak notification of cell NP
-- (store.h's weak_settle): the notification at commit8, unless that is
-- ''; with start8, the pending record of transaction start8 goes, and
-- the notification is written only if the record was still there.
-- ARGV: NP, start8 or '', commit8 or ''.  KEYS: the bucket's four
-- (common.lua).  Returns {0}.
local NP, start8, commit8 = ARGV[1], ARGV[2], ARGV[3]

local notify = commit8 ~= ''
if start8 ~= '' then
	local pending = NP .. '\7' .. inv8(start8)
	if redis.call('HEXISTS', KEYS[2], pending) == 1 then
		del(pending)
	else
		notify = false          -- settled before
	end
end
if notify then
	put(NP .. '\5' .. inv8(commit8), '')
end
return {0}
