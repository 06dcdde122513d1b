#!/usr/bin/env node
import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{b as V}from"./shared-V6FW2Q3U.mjs";import{a as O,b as $,c as P,d as A,e as w,f as k}from"./shared-LUPKNVBY.mjs";import{b as Y}from"./shared-K7YMOH6Y.mjs";import{a as f,b,c as E,d as T,e as D,f as p,g as v,h as I,i as W,j as F}from"./shared-65DRFUWA.mjs";import{k as K,m as q,t as J}from"./shared-TQ6RRQUR.mjs";import{a as i,b as S}from"./shared-W4ZUK67W.mjs";import{readFileSync as le}from"node:fs";import{resolve as z}from"node:path";var ce=["repository","config",...b],Z=`Common: --repository owner/name (default GITHUB_REPOSITORY), --config FILE (the reviewed
claims config: lease policy per namespace; default: the built-in lease),
--api-max-attempts N, --api-retry-base-ms N, --api-retry-max-ms N, --help.
Environment: GITHUB_TOKEN (or LEASEHOLD_TOKEN), GITHUB_API_URL, and the run context
(GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, GITHUB_JOB \u2026) recorded in the claim when present.
Output: one JSON document on stdout (schema, command, status, exitCode, action, claim, next,
error); the exit code is the document's, from the one exit-code table.`,M={claim:{kind:"claim",strings:["namespace","key","run-id-prefix","run-id"],multiple:["set"],booleans:["no-takeover","dry-run"],usage:`claims claim --namespace NS --key K [--run-id-prefix P] [--no-takeover] [--set k=v]\u2026 [--dry-run]
Claims one item: absent or released \u2192 acquired; held past expiry and grace \u2192 taken-over (with
--no-takeover: expired, 11, naming the oid a takeover needs); held and live \u2192 contended (10,
with eligibleAt); this job's own \u2192 already-held (10). The run id (P-<nonce>) is generated here:
--run-id is refused.`},takeover:{kind:"claim-takeover",strings:["namespace","key","supersedes","run-id-prefix","run-id"],multiple:["set"],booleans:["dry-run"],usage:`claims takeover --namespace NS --key K --supersedes OID [--run-id-prefix P] [--set k=v]\u2026 [--dry-run]
Takes an expired holding over, only if the ref is still at OID (the oid claim --no-takeover printed).`},renew:{kind:"claim-renew",strings:["namespace","key","token","run-id","repository-id","prior","clock-offset"],multiple:["set"],booleans:["if-due","dry-run"],usage:`claims renew --namespace NS --key K --token OID --run-id ID [--if-due] [--set k=v]\u2026 [--dry-run]
             [--repository-id ID --prior JSON [--clock-offset LOW,HIGH]]
Renews this run's holding: a new version, a new token (read it from the document's next), its
expiry moved, never past the ceiling (at the ceiling: stale, 16). --if-due writes only once
renewAfter has passed (else not-due, 0). --repository-id and --prior, as the last document's
next line prints them, save the read; --clock-offset (printed beside them) is GitHub's clock as
the last command measured it, so the lease is stamped by GitHub's time before any answer.`},release:{kind:"claim-release",strings:["namespace","key","token","run-id","repository-id","prior","clock-offset"],booleans:["dry-run"],usage:`claims release --namespace NS --key K --token OID --run-id ID [--dry-run] [--repository-id ID --prior JSON [--clock-offset LOW,HIGH]]
Releases this run's holding (writes a released version; never deletes the ref). A repeat is
already-released (0); a token one or more renewals old is stale (16), naming the current one.`},verify:{kind:"claim-verify",strings:["namespace","key","token","run-id"],booleans:["dry-run"],usage:`claims verify --namespace NS --key K --token OID --run-id ID
Reads only: held (0); inside the last minRemaining before the expiry (the ceiling, once the
expiry reaches it) renew-required (15);
an older token of this run's stale (16); another run's lost (13); released or absent not-held (14).`},read:{kind:"claim-read",strings:["namespace","key"],booleans:["dry-run"],usage:`claims read --namespace NS --key K
The claim as it is (ok, 0): its token and payload, or no token when the ref does not exist.`},list:{kind:"claim-list",strings:["namespace"],booleans:["stale","dry-run"],usage:`claims list --namespace NS [--stale]
Every claim of the namespace, every page read. --stale: only the holdings a claim would take
over (past their expiry, grace and skew), status expired.`},adopt:{kind:"claim-adopt",strings:["namespace","key","run-id","candidate"],booleans:["dry-run"],usage:`claims adopt --namespace NS --key K --run-id ID [--candidate OID]
After an unknown outcome (12): proves from the head's payload (its run id) whether the write was
this run's: adopted (0) with the token, else lost (13). Run it as the failed document printed it.`},"family claim":{kind:"claim-family-claim",strings:["namespace","keys","run-id-prefix","run-id"],multiple:["set"],booleans:["dry-run"],usage:`claims family claim --namespace NS --keys K1,K2,\u2026 [--run-id-prefix P] [--set k=v]\u2026 [--dry-run]
Claims up to 20 keys of one namespace in one updateRefs call: all of them or none
(family-aborted, 10, when one is held by another run).`},"family renew":{kind:"claim-family-renew",strings:["namespace","keys","tokens","run-id"],multiple:["set"],booleans:["if-due","dry-run"],usage:`claims family renew --namespace NS --keys K1,K2,\u2026 --tokens T1,T2,\u2026 --run-id ID [--if-due] [--set k=v]\u2026 [--dry-run]
Renews a family in one updateRefs call, every member or none (tokens in the order of the keys;
each rotates: read them from the document's next). --if-due writes once any member is due. A
member lost, released or stale decides for the family (lost 13, not-held 14, stale 16).`},"family release":{kind:"claim-family-release",strings:["namespace","keys","tokens","run-id"],booleans:["dry-run"],usage:`claims family release --namespace NS --keys K1,K2,\u2026 --tokens T1,T2,\u2026 --run-id ID [--dry-run]
Releases a family in one updateRefs call (tokens in the order of the keys): every member still
this run's at its token. A member taken over (not-held, 14) or renewed since (stale, 16) is named
and decides the status; the others are released all the same.`},guard:{kind:"claim-renew",strings:["namespace","key","token","keys","tokens","run-id","repository-id","prior","clock-offset","kill-grace-seconds"],booleans:["dry-run"],child:!0,usage:`claims guard --namespace NS (--key K --token OID | --keys K1,K2,\u2026 --tokens T1,T2,\u2026) --run-id ID
             [--kill-grace-seconds N] [--repository-id ID --prior JSON [--clock-offset LOW,HIGH]] -- command [args\u2026]
Verifies the claim (or the family: --keys and --tokens, as family claim printed them) with a
renewal, runs the command (no shell, its own process group, no
credential in its environment), renews on the lease's schedule (each renewal rotates the token;
the guard keeps the current one) and stops the group (SIGTERM, SIGKILL after the kill grace)
when the claim is proven lost or the local deadline passes unproven. A family is renewed in one
updateRefs call, every member together; any member lost stops the command. Its documents go to stderr
(guard-start, then guard-exit or guard-refused; the last one's next carries the current token);
stdout is the command's. Exit: the command's own code (128 + n: signal n; 127: it could not
start); 13 lost or local deadline (the document's reason says which); 14 not held at start;
2 usage. A command's own code can collide with these: read the document.`}};function B(e){return e[0]==="family"&&["claim","release","renew"].includes(e[1])?[`family ${e[1]}`,e.slice(2)]:[e[0],e.slice(1)]}i(B,"verbOf");var de=i(()=>[process.execPath,z(process.argv[1])].map(F).join(" "),"invocation");function Q(e,r){let t={...D(r),invocation:de()};for(let[o,s]of Object.entries(e))if(!(o==="help"||o==="kill-grace-seconds"))if(o==="config"){let n=z(s);try{t.config=le(n,"utf8")}catch(l){throw Object.assign(new Error(`--config ${n}: ${l.code==="ENOENT"?"no such file":l.message}`),{code:"invalid-config",path:n})}t["config-path"]=n}else s===!0?t[o]="true":Array.isArray(s)?t[o]=s.join(`
`):t[o]=s;return t}i(Q,"inputsOf");function ue(){return Object.entries(M).map(([,e])=>`  leasehold ${e.usage.split(`
`)[0]}`).join(`
`)}i(ue,"helpText");var R={summary:"per-item claims on git refs: claim, renew, release, verify, read, list, takeover, adopt, family claim|renew|release, guard",usage:`leasehold claims <verb> [flags]   (leasehold claims <verb> --help for one)

${ue()}

${Z}`,verbs:M,verbOf:B,commandName:i(e=>`claims ${B(e)[0]??""}`.trim(),"commandName"),async run({core:e,argv:r,env:t}){let[o,s]=B(r),n=M[o];if(!n)throw new f(`unknown claims verb ${JSON.stringify(r.slice(0,2).join(" "))} (known: ${Object.keys(M).join(", ")})`);let{values:l,child:a}=E(s,{strings:[...ce,...n.strings],multiple:n.multiple??[],booleans:n.booleans??[],child:n.child});if(l.help)return process.stdout.write(`usage: leasehold ${n.usage}

${Z}
`),0;if(o==="guard")return me({core:e,values:l,child:a,env:t});let c=Q(l,t),m=new e.Operation(n.kind,c,void 0);try{for(let N of m.plan.warnings)p.warning(I(N));let h=k({baseUrl:w(t),token:T(t),repository:m.plan.repository}),d=new AbortController,u=i(()=>d.abort(),"onSignal");for(let N of $)process.once(N,u);try{let N=await O({op:m,perform:h,logger:p,cancel:d.signal}),H=e.resultDocument(`claims ${o}`,N);return v(H),H.exitCode}finally{for(let N of $)process.off(N,u)}}finally{m.free?.()}}};async function me({core:e,values:r,child:t,env:o}){if(r["dry-run"])throw new f("claims guard has no --dry-run: it runs the command");if(t.length===0)throw new f("claims guard needs a command after --");let s=r.keys!==void 0||r.tokens!==void 0,n=new e.GuardReport(s?"claim-family-renew":"claim-renew",Q(r,o)),l=new e.Guard(r["kill-grace-seconds"]?{"kill-grace-seconds":r["kill-grace-seconds"]}:{}),{plan:a}=n;for(let d of a.warnings)p.warning(I(d));let c=T(o),m=k({baseUrl:w(o),token:c,repository:a.repository}),{exitCode:h}=await A({core:e,machine:l,report:n,argv:t,perform:m,emit:i(d=>v(d,process.stderr),"emit"),logger:p,secrets:[c]});return h}i(me,"claimsGuard");var X=i((e,r)=>{let t=Math.max(0,Math.round((r-Date.parse(e))/1e3));return t<120?`${t}s`:t<7200?`${Math.round(t/60)}m`:`${(t/3600).toFixed(1)}h`},"ago"),_=i(e=>e?String(e).replace("T"," ").replace(/\.\d+Z$/,"Z"):"","clock");function ee(e,r){let t=e.map((s,n)=>Math.max(s.length,...r.map(l=>String(l[n]).length))),o=i(s=>`  ${s.map((n,l)=>String(n).padEnd(t[l])).join("  ")}`.trimEnd(),"line");return[o(e),...r.map(o)]}i(ee,"table");function te(e,r,t){let o=e.outcome??{},s=[`lock ${r.lock} in ${r.repository} (state branch ${r.stateBranch})`];if(e.exitCode!==0||!o.state)return s.push(`  ${e.status} (exit ${e.exitCode}, ${e.action})${e.error?`: ${e.error.code}: ${e.error.message}`:""}`),!o.state&&e.exitCode===0&&s.push("  never used: no state yet (nothing held, nobody waiting)"),`${s.join(`
`)}
`;let n=o.state;if(s.push(`  ${n.holders.length} of capacity ${o.capacity??n.config?.capacity??"?"} held \xB7 ${n.queue.length} waiting \xB7 last fence ${n.fence} \xB7 revision ${n.revision}`),n.lastChange&&s.push(`  last change: ${n.lastChange.action} by ${n.lastChange.by} at ${_(n.lastChange.at)}`),s.push("","Holders"),n.holders.length===0)s.push("  none");else{let l=n.holders.map(a=>[a.fence,a.holderId,`${_(a.acquiredAt)} (${X(a.acquiredAt,t)} ago)`,_(a.expiresAt),a.run?.url??""]);s.push(...ee(["fence","holder","since","lease until","run"],l))}if(s.push("","Queue"),n.queue.length===0)s.push("  empty");else{let l=n.queue.map((a,c)=>[c+1,a.holderId,`${_(a.enqueuedAt)} (${X(a.enqueuedAt,t)} ago)`,a.run?.url??""]);s.push(...ee(["#","holder","waiting since","run"],l))}return s.push("","Timeline (UTC)",...J(n,t)),`${s.join(`
`)}
`}i(te,"statusView");var ne=["lock","repository","state-branch","holder-id","holder-suffix","nonce"],g=`Environment: GITHUB_TOKEN (or LEASEHOLD_TOKEN), GITHUB_API_URL, and the run context
(GITHUB_REPOSITORY, GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, GITHUB_JOB, RUNNER_NAME) the holder id
is built from.`;function y(e,r){let t={...D(r)};for(let[o,s]of Object.entries(e))o!=="help"&&(s===!0?t[o]="true":Array.isArray(s)?t[o]=s.join(`
`):typeof s=="string"&&(t[o]=s));return t}i(y,"inputsOf");async function x(e,r,t,o,s){let n=new e.Operation(r,t,void 0);try{let l=n.plan;for(let h of l.warnings)p.warning(I(h));let a=k({baseUrl:w(o),token:T(o),repository:l.repository}),c=new AbortController,m=i(()=>c.abort(),"onSignal");for(let h of $)process.once(h,m);try{let h=await O({op:n,perform:a,logger:p,cancel:c.signal}),d=e.resultDocument(r,h);return s?process.stdout.write(s(d,l)):v(d),d.exitCode}finally{for(let h of $)process.off(h,m)}}finally{n.free?.()}}i(x,"once");var C=i((e,r=[])=>K[e].filter(t=>t!=="token"&&!r.includes(t)),"flagsOf"),re={acquire:{summary:"take a slot of a lock, waiting in its queue (one document: acquired, timeout, \u2026)",flags:{strings:C("acquire",["release-on-exit"])},usage:`leasehold acquire --lock L [--timeout-minutes N] [--poll-seconds N] [--lease-minutes N]
                  [--record-job-id true|false (default false)] [--check-run-id N] [--repository owner/name]
                  [--state-branch B] [--holder-suffix S] [--api-max-attempts N \u2026]

Takes a slot, waiting in the lock's queue up to --timeout-minutes (0 tries once); SIGINT or
SIGTERM while waiting leaves the queue (cancelled). The flags are the acquire action's inputs
(README "acquire inputs"); there is no post step here: release yourself (or let the lease run
out). Prints one result document (outcome.fence, outcome.nonce for renew and guard); exits by
the table (0 acquired, 10 timeout or cancelled, 3 a broken config, 20 transport, \u2026).
${g}`,run:i(({core:e,values:r,env:t})=>x(e,"acquire",y(r,t),t),"run")},release:{summary:"give a lock slot back, or leave its queue (released, queue-cleaned, noop)",flags:{strings:C("release")},usage:`leasehold release --lock L [--holder-id ID | --holder-suffix S] [--release-deadline-seconds N]
                  [--check-run-id N] [--repository owner/name] [--state-branch B] [--api-max-attempts N \u2026]

Removes exactly this holder's holding or queue entry (the holder id is built from the run context
as acquire built it, or given). Idempotent. Prints one result document; exits by the table
(0 released, queue-cleaned or noop; 12 the state could not be updated in time, \u2026).
${g}`,run:i(({core:e,values:r,env:t})=>x(e,"release",y(r,t),t),"run")},status:{summary:"show a lock: holders, queue and timeline (JSON when piped or with --json)",flags:{strings:C("status"),booleans:["json","human"]},usage:`leasehold status --lock L [--json | --human] [--repository owner/name] [--state-branch B]

Reads the lock without changing it. At a terminal it prints its holders, queue and a timeline
of who held it when; piped, or with --json, the one result document (outcome.state is the
state); --human prints the terminal view anywhere. Exits by the table (0, 16 a state it cannot
read, 21 refused, \u2026).
${g}`,run({core:e,values:r,env:t}){if(r.json&&r.human)throw new f("--json and --human exclude each other");let o=r.human||!r.json&&process.stdout.isTTY,{json:s,human:n,...l}=r;return x(e,"status",y(l,t),t,o?(a,c)=>te(a,c,Date.now()):void 0)}},renew:{summary:"extend a lock holding's lease (one document: renewed, not-due, lost\u2026)",flags:{strings:[...ne,"outcome","retry-at",...b],booleans:["if-due"]},usage:`leasehold renew --lock L --nonce N [--if-due] [--repository owner/name] [--state-branch B]
                [--holder-id ID | --holder-suffix S] [--outcome success|rate-limited [--retry-at T]]
                [--api-max-attempts N \u2026]

Extends this claim's lease (the holding acquire made, told by its nonce), never past its
ceiling. --if-due writes only once the renewal is due. On a pool, --outcome says how the work on
the granted resource goes: rate-limited backs the resource off (until --retry-at, else 15 minutes
doubling per consecutive hit, up to 5 hours), success resets it. Prints one result document; exits by the
exit-code table (0 renewed or not-due, 13 lost, 20 transport, \u2026).
${g}`,run:i(({core:e,values:r,env:t})=>x(e,"renew",y(r,t),t),"run")},"report-usage":{summary:"record a usage reading of one resource of a pool (used fraction, window, observed at, status)",flags:{strings:["lock","repository","state-branch","resource","used","window-start","reset-at","observed-at","status",...b]},usage:`leasehold report-usage --lock L --resource R --used F --window-start T --reset-at T
                --observed-at T [--status allowed|throttled|rejected] [--repository owner/name]
                [--state-branch B] [--api-max-attempts N \u2026]

Records a usage reading of resource R of pool L: the used fraction F of its window (0 to 1), the
window's start and reset, and when it was observed (times in UTC, YYYY-MM-DDTHH:MM:SSZ). An
older reading never replaces a newer one (noop); a reading observed over 45 minutes ago, or of a
window that has reset, counts for nothing. Prints one result document; exits by the exit-code
table (0 recorded or noop, 3 the lock is not a pool or declares no such resource, 20 transport).
${g}`,run:i(({core:e,values:r,env:t})=>x(e,"report-usage",y(r,t),t),"run")},recover:{summary:"an operator's recovery: a quarantine becomes a cooldown, or the lock's incident ends (nothing written on a wrong id)",flags:{strings:C("recover",["resource-safe","confirmed"]),booleans:["resource-safe","confirmed"]},usage:`leasehold recover --operation recover --lock L --reservation-id ID --resource-safe
                [--repository owner/name] [--state-branch B] [--api-max-attempts N \u2026]
leasehold recover --operation recover-incident --lock L [--incident-id ID] --confirmed
                [--repository owner/name] [--state-branch B] [--api-max-attempts N \u2026]

For an operator (docs/lifecycle.md). recover: once you checked the resource is clean, the
quarantine with exactly this id becomes a cooldown of the lock's cooldownSeconds (it is never
freed outright). recover-incident: once the incident's cause is resolved, the lock's incident
ends (the one with --incident-id, or, omitted, the one standing when the state is read; its id
is compared again before the write). Without --resource-safe or --confirmed, with a wrong id or
no incident, nothing is written. Prints one result document; exits by the exit-code table (0
recovered or incident-recovered, 22 refused, 20 transport, 21 permission).
${g}`,run:i(({core:e,values:r,env:t})=>x(e,"recover",y(r,t),t),"run")},reap:{summary:"free what dead jobs left in one or more locks, proven from the Actions API",flags:{strings:["repository","state-branch","scan-deadline-seconds",...b],multiple:["lock"]},usage:`leasehold reap --lock L [--lock L2 \u2026] [--scan-deadline-seconds N] [--repository owner/name]
                [--state-branch B] [--api-max-attempts N \u2026]

Removes holdings and queue entries whose run attempt (or job) the Actions API proves over. Prints
one result document (its outcome.reaped lists every verdict); exits 0 when every entry was
judged, else by the table (20: the scan deadline passed; 21: GitHub refused).
${g}`,run:i(({core:e,values:r,env:t})=>x(e,"reap",y(r,t),t),"run")},repair:{summary:"rewrite a broken lock state as a valid empty one, fences kept increasing (dry run without --confirm)",flags:{strings:["lock","repository","state-branch",...b],booleans:["confirm"]},usage:`leasehold repair --lock L [--confirm] [--repository owner/name] [--state-branch B]

For an operator, when a lock's state file (locks/<lock>.json on the state branch) was broken by
hand and every verb stops on it (status stale, 16). Reads the current version: valid or absent,
nothing to do (noop). Broken: lists every commit of the state branch that changed the file, reads
each version and takes the highest fence any of them handed out (a version that does not parse
is skipped and counted), and rewrites the file as an empty state whose fence counter is that
fence, so the next fence is above every fence ever handed out. Holders and waiters in the broken
file are dropped: their jobs must acquire again. Without --confirm it is a dry run: the document
(status would-repair) says what would be written, and nothing is. The write is a
compare-and-swap on the broken version: if the file changed meanwhile, nothing is written
(contended, 10). Prints one result document; exits by the exit-code table (docs/operations.md).
${g}`,run:i(({core:e,values:r,env:t})=>x(e,"repair",y(r,t),t),"run")},guard:{summary:"run a command under a lock holding, renewing it, stopping the command if it is lost",flags:{strings:[...ne,"kill-grace-seconds",...b],child:!0},usage:`leasehold guard --lock L --nonce N [--kill-grace-seconds N] [--repository owner/name]
                [--state-branch B] [--holder-id ID | --holder-suffix S] -- command [args\u2026]

Verifies the holding with a renewal, runs the command (no shell, its own process group), renews
on the lease's schedule and stops the group (SIGTERM, SIGKILL after the kill grace) when the
holding is proven lost or the local deadline passes unproven. Prints a guard-start line before
the command runs and a guard-exit (or guard-refused) line at the end, on stdout beside the
command's own output. Exit: the command's own code (128 + n when signal n ended it, 127 when it
could not start); 13 lost or the local deadline passed (the line's reason says which); 14 the
holding could not be verified (the command never ran); 2 usage. The command's environment
carries no credential.
${g}`,async run({core:e,values:r,child:t,env:o}){if(t.length===0)throw new f("guard needs a command after --");let s=y(r,o),{report:n,plan:l,machine:a}=P(e,s);for(let d of l.warnings)p.warning(I(d));let c=T(o),m=k({baseUrl:w(o),token:c,repository:l.repository}),{exitCode:h}=await A({core:e,machine:a,report:n,argv:t,perform:m,emit:i(d=>v(d),"emit"),logger:p,secrets:[c]});return h}}};import{parseArgs as he}from"node:util";var oe="slots allocate",pe="leasehold slots allocate --namespace N --prefix P [--repository owner/name] [--dry-run]",L=`usage: leasehold slots allocate --namespace N --prefix P [--repository owner/name] [--dry-run]

Allocates the next number of a namespace and prefix by creating
refs/leasehold/slots/<namespace>/<prefix><NN> (first writer wins): NN is one past the highest
number of the whole listing, zero-padded to two digits at least. A number is never re-issued
and a slot ref is never deleted.

  --namespace N     [A-Za-z0-9._-]{1,100}
  --prefix P        [A-Za-z0-9._-]{1,64}, not ending in a digit
  --repository R    owner/name holding the refs (default: GITHUB_REPOSITORY)
  --dry-run         read the listing, print the number that would be tried first, write nothing
  --help            this text

Environment: GITHUB_TOKEN (or LEASEHOLD_TOKEN), GITHUB_API_URL.
stdout: one JSON document; exit code: its exitCode (0 allocated, 2 usage, 10 contended,
12 unknown outcome, 16 stale, 20 transport, 21 permission).`,se={namespace:{type:"string"},prefix:{type:"string"},repository:{type:"string"},"dry-run":{type:"boolean"},help:{type:"boolean"}},G={debug:i(e=>process.env.LEASEHOLD_DEBUG?console.error(`debug: ${e}`):void 0,"debug"),info:i(e=>console.error(e),"info"),warning:i(e=>console.error(`warning: ${e}`),"warning")};function ae(e){return process.stdout.write(`${JSON.stringify(e)}
`),e.exitCode}i(ae,"print");function j(e,r){return console.error(`leasehold: ${r}`),ae(S().refusalDocument(oe,e,r))}i(j,"refuse");function fe(e){return!e.input||!e.rule?e.message:`${Object.hasOwn(se,e.input)?`--${e.input}`:`environment variable ${e.input}`} ${e.rule}${e.value?` (got ${JSON.stringify(e.value)})`:""}`}i(fe,"inputMessage");async function ge(e,r=process.env){let t=S(),[o,...s]=e;if(o!=="allocate")return o==="--help"||o==="help"?(console.log(L),0):j("invalid-input",`unknown slots command ${JSON.stringify(o??"")}
${L}`);let n;try{({values:n}=he({args:s,options:se,strict:!0,allowPositionals:!1}))}catch(u){return j("invalid-input",`${u.message}
${L}`)}if(n.help)return console.log(L),0;let l={};for(let u of["namespace","prefix","repository"])n[u]!==void 0&&(l[u]=n[u]);n["dry-run"]&&(l["dry-run"]="true");for(let u of q)r[u]&&(l[u]=r[u]);let a;try{a=new t.Operation("slot-allocate",l,void 0)}catch(u){if(u.code==="invalid-input")return j(u.code,fe(u));throw u}for(let u of a.plan.warnings)G.warning(u);let c=(r.LEASEHOLD_TOKEN||r.GITHUB_TOKEN||"").trim();if(!c)return j("invalid-input","set GITHUB_TOKEN (or LEASEHOLD_TOKEN) to a token that can create refs in the repository");let m=k({baseUrl:w(r),token:c,repository:a.plan.repository}),h=await O({op:a,perform:m,logger:G}),d=t.resultDocument(oe,h);return G.info(`leasehold: ${d.status}${d.slot?.detail?`: ${d.slot.detail}`:""}`),ae(d)}i(ge,"slots");var ie={summary:"allocate the next never-recycled slot number of a namespace and prefix",usage:pe,run:i(({argv:e,env:r})=>ge(e,r),"run")};var U={...re,claims:R,slots:ie,validate:Y,...V};function ye(e){let r=Math.max(...Object.keys(U).map(n=>n.length)),t=Object.entries(U).map(([n,l])=>`  ${n.padEnd(r)}  ${l.summary}`),o=Object.keys(R.verbs).map(n=>`  claims ${n}`),s=e.exitTable.map(n=>`  ${String(n.exitCode).padStart(2)}  ${n.status.padEnd(16)} ${n.action}`);return`usage: leasehold <command> [flags]   (node dist/cli.mjs \u2026; <command> --help for one)

Commands:
${t.join(`
`)}

Claims verbs:
${o.join(`
`)}

Exit codes (one table for every command):
${s.join(`
`)}
`}i(ye,"overview");async function we(e,r){let t=S(),[o,...s]=e;if(o==="--help"||o==="-h"||o==="help")return process.stdout.write(ye(t)),0;let n=U[o],l=o==="claims"?R.commandName(s):n?.verbWords&&n.verbWords.includes(s[0])?`${o} ${s[0]}`:o??"";try{if(!n)throw new f(`unknown command ${JSON.stringify(o??"")} (known: ${Object.keys(U).join(", ")}; --help lists them)`);if(o==="claims"&&s[0]==="--help")return process.stdout.write(`usage: ${n.usage}
`),0;if(o==="claims"&&s.length===0)throw new f("claims needs a verb (leasehold claims --help lists them)");if(n.verbWords){let[a,...c]=s;if(a==="--help"||a==="-h")return process.stdout.write(`usage: ${n.usage}
`),0;if(!n.verbWords.includes(a))throw new f(`${o} needs a verb: ${n.verbWords.join(" | ")} (${o} --help)`);let{values:m}=E(c,n.flags);return m.help?(process.stdout.write(`usage: ${n.usage}
`),0):await n.run({core:t,values:m,env:r,verb:a})}if(n.flags){let{values:a,child:c,positionals:m}=E(s,n.flags);return a.help?(process.stdout.write(`usage: ${n.usage}
`),0):await n.run({core:t,values:a,child:c,positionals:m,env:r})}return await n.run({core:t,argv:s,env:r})}catch(a){!a.usage&&!a.code&&p.warning(a.stack??String(a));let c=W(t,l,a);return v(c),c.exitCode}}i(we,"main");we(process.argv.slice(2),process.env).then(e=>{process.exitCode=e});
