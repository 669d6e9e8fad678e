-- wrk script: one PostHog page view per request, from 10,000 visitors on
-- 20 pages (HOLDCO_BENCH_KEY is the company's public key; HOLDCO_BENCH_BATCH
-- events per request when set, as a batch).
local key = os.getenv("HOLDCO_BENCH_KEY") or "none"
local batch = tonumber(os.getenv("HOLDCO_BENCH_BATCH") or "0")
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

local function event()
  return string.format('{"event":"$pageview","distinct_id":"v%d","properties":{"token":"%s","$current_url":"https://shop.example/p%d","$referrer":"https://news.example/"}}',
    math.random(1, 10000), key, math.random(1, 20))
end

request = function()
  if batch > 0 then
    local evs = {}
    for i = 1, batch do evs[i] = event() end
    return wrk.format(nil, nil, nil, '{"api_key":"' .. key .. '","batch":[' .. table.concat(evs, ",") .. ']}')
  end
  return wrk.format(nil, nil, nil, event())
end
