#!/usr/bin/env node
import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{b as ee}from"./shared-5OMC5HUR.mjs";import{a as I,b as H,c as W,d as C,e as M,f as x,g as v,h as Z}from"./shared-A3WHNWZQ.mjs";import{b as X}from"./shared-VYWC7X6V.mjs";import{a as f,b as N,c as D,d as S,e as _,f as y,g as O,h as E,i as z,j as Q}from"./shared-KHWKXNC4.mjs";import{k as Y,m as V}from"./shared-DBLLKVPJ.mjs";import{a,b as A}from"./shared-4Z44FCLV.mjs";import{readFileSync as ge}from"node:fs";import{resolve as ne}from"node:path";var ye=["repository","config","holder-suffix",...N],te=`Common: --repository owner/name (default GITHUB_REPOSITORY), --config FILE (the reviewed
claims config: lease policy per namespace; default: the built-in lease), --holder-suffix S,
--api-max-attempts N, --api-retry-base-ms N, --api-retry-max-ms N, --help.
Environment: GITHUB_TOKEN (or LEASEHOLD_TOKEN), GITHUB_API_URL, and the run context
(GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, GITHUB_JOB \u2026) recorded in the claim when present.
Output: one JSON document on stdout (schema, command, status, exitCode, action, claim, next,
error); the exit code is the document's, from the one exit-code table.`,R={claim:{kind:"claim",strings:["namespace","key","run-id-prefix","run-id"],multiple:["set"],booleans:["no-takeover","dry-run"],usage:`claims claim --namespace NS --key K [--run-id-prefix P] [--no-takeover] [--set k=v]\u2026 [--dry-run]
Claims one item: absent or released \u2192 acquired; held past expiry and grace \u2192 taken-over (with
--no-takeover: expired, 11, naming the oid a takeover needs); held and live \u2192 contended (10,
with eligibleAt); this job's own \u2192 already-held (10). The run id (P-<nonce>) is generated here:
--run-id is refused.`},takeover:{kind:"claim-takeover",strings:["namespace","key","supersedes","run-id-prefix","run-id"],multiple:["set"],booleans:["dry-run"],usage:`claims takeover --namespace NS --key K --supersedes OID [--run-id-prefix P] [--set k=v]\u2026 [--dry-run]
Takes an expired holding over, only if the ref is still at OID (the oid claim --no-takeover printed).`},renew:{kind:"claim-renew",strings:["namespace","key","token","run-id","repository-id","prior"],multiple:["set"],booleans:["if-due","dry-run"],usage:`claims renew --namespace NS --key K --token OID --run-id ID [--if-due] [--set k=v]\u2026 [--dry-run]
             [--repository-id ID --prior JSON]
Renews this run's holding: a new version, a new token (read it from the document's next), its
expiry moved, never past the ceiling (at the ceiling: stale, 16). --if-due writes only once
renewAfter has passed (else not-due, 0). --repository-id and --prior, as the last document's
next line prints them, save the read.`},release:{kind:"claim-release",strings:["namespace","key","token","run-id","repository-id","prior"],booleans:["dry-run"],usage:`claims release --namespace NS --key K --token OID --run-id ID [--dry-run] [--repository-id ID --prior JSON]
Releases this run's holding (writes a released version; never deletes the ref). A repeat is
already-released (0); a token one or more renewals old is stale (16), naming the current one.`},verify:{kind:"claim-verify",strings:["namespace","key","token","run-id"],booleans:["dry-run"],usage:`claims verify --namespace NS --key K --token OID --run-id ID
Reads only: held (0); inside the last minRemaining before the ceiling renew-required (15);
an older token of this run's stale (16); another run's lost (13); released or absent not-held (14).`},read:{kind:"claim-read",strings:["namespace","key"],booleans:["dry-run"],usage:`claims read --namespace NS --key K
The claim as it is (ok, 0): its token and payload, or no token when the ref does not exist.`},list:{kind:"claim-list",strings:["namespace"],booleans:["stale","dry-run"],usage:`claims list --namespace NS [--stale]
Every claim of the namespace, every page read. --stale: only holdings past their expiry.`},adopt:{kind:"claim-adopt",strings:["namespace","key","run-id","candidate"],booleans:["dry-run"],usage:`claims adopt --namespace NS --key K --run-id ID [--candidate OID]
After an unknown outcome (12): proves from the head's payload (its run id) whether the write was
this run's: adopted (0) with the token, else lost (13). Run it as the failed document printed it.`},"family claim":{kind:"claim-family-claim",strings:["namespace","keys","run-id-prefix","run-id"],multiple:["set"],booleans:["dry-run"],usage:`claims family claim --namespace NS --keys K1,K2,\u2026 [--run-id-prefix P] [--set k=v]\u2026 [--dry-run]
Claims up to 20 keys of one namespace in one updateRefs call: all of them or none
(family-aborted, 10, when one is held by another run).`},"family renew":{kind:"claim-family-renew",strings:["namespace","keys","tokens","run-id"],multiple:["set"],booleans:["if-due","dry-run"],usage:`claims family renew --namespace NS --keys K1,K2,\u2026 --tokens T1,T2,\u2026 --run-id ID [--if-due] [--set k=v]\u2026 [--dry-run]
Renews a family in one updateRefs call, every member or none (tokens in the order of the keys;
each rotates: read them from the document's next). --if-due writes once any member is due. A
member lost, released or stale decides for the family (lost 13, not-held 14, stale 16).`},"family release":{kind:"claim-family-release",strings:["namespace","keys","tokens","run-id"],booleans:["dry-run"],usage:`claims family release --namespace NS --keys K1,K2,\u2026 --tokens T1,T2,\u2026 --run-id ID [--dry-run]
Releases a family in one updateRefs call (tokens in the order of the keys).`},guard:{kind:"claim-renew",strings:["namespace","key","token","keys","tokens","run-id","repository-id","prior","kill-grace-seconds"],booleans:["dry-run"],child:!0,usage:`claims guard --namespace NS (--key K --token OID | --keys K1,K2,\u2026 --tokens T1,T2,\u2026) --run-id ID
             [--kill-grace-seconds N] [--repository-id ID --prior JSON] -- command [args\u2026]
Verifies the claim (or the family: --keys and --tokens, as family claim printed them) with a
renewal, runs the command (no shell, its own process group, no
credential in its environment), renews on the lease's schedule (each renewal rotates the token;
the guard keeps the current one) and stops the group (SIGTERM, SIGKILL after the kill grace)
when the claim is proven lost or the local deadline passes unproven. A family is renewed in one
updateRefs call, every member together; any member lost stops the command. Its documents go to stderr
(guard-start, then guard-exit or guard-refused; the last one's next carries the current token);
stdout is the command's. Exit: the command's own code (128 + n: signal n; 127: it could not
start); 13 lost or local deadline (the document's reason says which); 14 not held at start;
2 usage. A command's own code can collide with these: read the document.`}};function P(e){return e[0]==="family"&&["claim","release","renew"].includes(e[1])?[`family ${e[1]}`,e.slice(2)]:[e[0],e.slice(1)]}a(P,"verbOf");var we=a(()=>[process.execPath,ne(process.argv[1])].map(Q).join(" "),"invocation");function re(e,r){let n={..._(r),invocation:we()};for(let[s,o]of Object.entries(e))if(!(s==="help"||s==="kill-grace-seconds"))if(s==="config"){let t=ne(o);try{n.config=ge(t,"utf8")}catch(l){throw Object.assign(new Error(`--config ${t}: ${l.code==="ENOENT"?"no such file":l.message}`),{code:"invalid-config",path:t})}n["config-path"]=t}else o===!0?n[s]="true":Array.isArray(o)?n[s]=o.join(`
`):n[s]=o;return n}a(re,"inputsOf");function ke(){return Object.entries(R).map(([,e])=>`  leasehold ${e.usage.split(`
`)[0]}`).join(`
`)}a(ke,"helpText");var j={summary:"per-item claims on git refs: claim, renew, release, verify, read, list, takeover, adopt, family claim|renew|release, guard",usage:`leasehold claims <verb> [flags]   (leasehold claims <verb> --help for one)

${ke()}

${te}`,verbs:R,verbOf:P,commandName:a(e=>`claims ${P(e)[0]??""}`.trim(),"commandName"),async run({core:e,argv:r,env:n}){let[s,o]=P(r),t=R[s];if(!t)throw new f(`unknown claims verb ${JSON.stringify(r.slice(0,2).join(" "))} (known: ${Object.keys(R).join(", ")})`);let{values:l,child:i}=D(o,{strings:[...ye,...t.strings],multiple:t.multiple??[],booleans:t.booleans??[],child:t.child});if(l.help)return process.stdout.write(`usage: leasehold ${t.usage}

${te}
`),0;if(s==="guard")return be({core:e,values:l,child:i,env:n});let c=re(l,n),m=new e.Operation(t.kind,c,void 0);try{for(let T of m.plan.warnings)y.warning(E(T));let p=v({baseUrl:x(n),token:S(n),repository:m.plan.repository}),g=await I({op:m,perform:p,logger:y}),d=e.resultDocument(`claims ${s}`,g);return O(d),d.exitCode}finally{m.free?.()}}};async function be({core:e,values:r,child:n,env:s}){if(r["dry-run"])throw new f("claims guard has no --dry-run: it runs the command");if(n.length===0)throw new f("claims guard needs a command after --");let o=r.keys!==void 0||r.tokens!==void 0;if(o&&(r.key!==void 0||r.token!==void 0))throw new f("claims guard takes --key and --token, or --keys and --tokens (a family), not both");if(o&&(r.prior!==void 0||r["repository-id"]!==void 0))throw new f("claims guard of a family reads its members: --prior and --repository-id are for one key");let t=o?"claim-family-renew":"claim-renew",l=re(r,s),i=new e.Operation(t,l,void 0),c=i.plan;i.free?.();let m=new e.Guard(r["kill-grace-seconds"]?{"kill-grace-seconds":r["kill-grace-seconds"]}:{});for(let u of c.warnings)y.warning(E(u));let p=S(s),g=v({baseUrl:x(s),token:p,repository:c.repository}),d="claims guard",T=null,F=a(()=>o?l.tokens.split(","):l.token,"tokens"),pe=a(u=>{let w=u.claims,h=w?.items??[];w?.status!=="renewed"||h.length===0||h.some(q=>!q.token)||(o?l.tokens=h.map(q=>q.token).join(","):(l.token=h[0].token,h[0].payload&&(l.prior=JSON.stringify(h[0].payload)),w.repositoryId&&(l["repository-id"]=w.repositoryId)),T=e.resultDocument(o?"claims family renew":"claims renew",u))},"onRenewal"),he={start:a(({pid:u,argv:w,lease:h})=>({schema:C,command:d,event:"guard-start",status:"held",pid:u,argv:w,[o?"tokens":"token"]:F(),expiresAt:new Date(h.expiresAt).toISOString(),localDeadline:new Date(h.localDeadline).toISOString(),claim:T?.claim??null}),"start"),refused:a(({first:u,finish:w})=>{let h=e.resultDocument(o?"claims family renew":"claims renew",u);return{schema:C,command:d,event:"guard-refused",status:"not-held",exitCode:w.exitCode,reason:w.reason,action:"the command never ran; see verification",verification:h,next:h.next,error:h.error}},"refused"),exit:a(({finish:u,child:w})=>({schema:C,command:d,event:"guard-exit",status:u.reason==="lost"||u.reason==="deadline"?"lost":u.reason,exitCode:u.exitCode,reason:u.reason,...w,renewals:u.renewals,[o?"tokens":"token"]:F(),claim:T?.claim??null,next:u.reason==="child-exited"||u.reason==="spawn-failed"?T?.next??{}:{}}),"exit")},{exitCode:fe}=await M({core:e,machine:m,inputs:l,argv:n,perform:g,emit:a(u=>O(u,process.stderr),"emit"),logger:y,secrets:[p],renewKind:t,onRenewal:pe,documents:he});return fe}a(be,"claimsGuard");var oe=a((e,r)=>{let n=Math.max(0,Math.round((r-Date.parse(e))/1e3));return n<120?`${n}s`:n<7200?`${Math.round(n/60)}m`:`${(n/3600).toFixed(1)}h`},"ago"),U=a(e=>e?String(e).replace("T"," ").replace(/\.\d+Z$/,"Z"):"","clock");function se(e,r){let n=e.map((o,t)=>Math.max(o.length,...r.map(l=>String(l[t]).length))),s=a(o=>`  ${o.map((t,l)=>String(t).padEnd(n[l])).join("  ")}`.trimEnd(),"line");return[s(e),...r.map(s)]}a(se,"table");function ae(e,r,n){let s=e.outcome??{},o=[`lock ${r.lock} in ${r.repository} (state branch ${r.stateBranch})`];if(e.exitCode!==0||!s.state)return o.push(`  ${e.status} (exit ${e.exitCode}, ${e.action})${e.error?`: ${e.error.code}: ${e.error.message}`:""}`),!s.state&&e.exitCode===0&&o.push("  never used: no state yet (nothing held, nobody waiting)"),`${o.join(`
`)}
`;let t=s.state;if(o.push(`  ${t.holders.length} of capacity ${s.capacity??t.config?.capacity??"?"} held \xB7 ${t.queue.length} waiting \xB7 last fence ${t.fence} \xB7 revision ${t.revision}`),t.lastChange&&o.push(`  last change: ${t.lastChange.action} by ${t.lastChange.by} at ${U(t.lastChange.at)}`),o.push("","Holders"),t.holders.length===0)o.push("  none");else{let l=t.holders.map(i=>[i.fence,i.holderId,`${U(i.acquiredAt)} (${oe(i.acquiredAt,n)} ago)`,U(i.expiresAt),i.run?.url??""]);o.push(...se(["fence","holder","since","lease until","run"],l))}if(o.push("","Queue"),t.queue.length===0)o.push("  empty");else{let l=t.queue.map((i,c)=>[c+1,i.holderId,`${U(i.enqueuedAt)} (${oe(i.enqueuedAt,n)} ago)`,i.run?.url??""]);o.push(...se(["#","holder","waiting since","run"],l))}return o.push("","Timeline (UTC)",...Z(t,n)),`${o.join(`
`)}
`}a(ae,"statusView");var ie=["lock","repository","state-branch","holder-id","holder-suffix","nonce"],k=`Environment: GITHUB_TOKEN (or LEASEHOLD_TOKEN), GITHUB_API_URL, and the run context
(GITHUB_REPOSITORY, GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, GITHUB_JOB, RUNNER_NAME) the holder id
is built from.`;function b(e,r){let n={..._(r)};for(let[s,o]of Object.entries(e))s!=="help"&&(o===!0?n[s]="true":Array.isArray(o)?n[s]=o.join(`
`):typeof o=="string"&&(n[s]=o));return n}a(b,"inputsOf");async function $(e,r,n,s,o){let t=new e.Operation(r,n,void 0);try{let l=t.plan;for(let p of l.warnings)y.warning(E(p));let i=v({baseUrl:x(s),token:S(s),repository:l.repository}),c=new AbortController,m=a(()=>c.abort(),"onSignal");for(let p of H)process.once(p,m);try{let p=await I({op:t,perform:i,logger:y,cancel:c.signal}),g=e.resultDocument(r,p);return o?process.stdout.write(o(g,l)):O(g),g.exitCode}finally{for(let p of H)process.off(p,m)}}finally{t.free?.()}}a($,"once");var L=a((e,r=[])=>Y[e].filter(n=>n!=="token"&&!r.includes(n)),"flagsOf"),le={acquire:{summary:"take a slot of a lock, waiting in its queue (one document: acquired, timeout, \u2026)",flags:{strings:L("acquire",["release-on-exit"])},usage:`leasehold acquire --lock L [--timeout-minutes N] [--poll-seconds N] [--lease-minutes N]
                  [--record-job-id true|false] [--check-run-id N] [--repository owner/name]
                  [--state-branch B] [--holder-suffix S] [--api-max-attempts N \u2026]

Takes a slot, waiting in the lock's queue up to --timeout-minutes (0 tries once); SIGINT or
SIGTERM while waiting leaves the queue (cancelled). The flags are the acquire action's inputs
(README "acquire inputs"); there is no post step here: release yourself (or let the lease run
out). Prints one result document (outcome.fence, outcome.nonce for renew and guard); exits by
the table (0 acquired, 10 timeout or cancelled, 3 a broken config, 20 transport, \u2026).
${k}`,run:a(({core:e,values:r,env:n})=>$(e,"acquire",b(r,n),n),"run")},release:{summary:"give a lock slot back, or leave its queue (released, queue-cleaned, noop)",flags:{strings:L("release")},usage:`leasehold release --lock L [--holder-id ID | --holder-suffix S] [--release-deadline-seconds N]
                  [--check-run-id N] [--repository owner/name] [--state-branch B] [--api-max-attempts N \u2026]

Removes exactly this holder's holding or queue entry (the holder id is built from the run context
as acquire built it, or given). Idempotent. Prints one result document; exits by the table
(0 released, queue-cleaned or noop; 12 the state could not be updated in time, \u2026).
${k}`,run:a(({core:e,values:r,env:n})=>$(e,"release",b(r,n),n),"run")},status:{summary:"show a lock: holders, queue and timeline (JSON when piped or with --json)",flags:{strings:L("status"),booleans:["json","human"]},usage:`leasehold status --lock L [--json | --human] [--repository owner/name] [--state-branch B]

Reads the lock without changing it. At a terminal it prints its holders, queue and a timeline
of who held it when; piped, or with --json, the one result document (outcome.state is the
state); --human prints the terminal view anywhere. Exits by the table (0, 16 a state it cannot
read, 21 refused, \u2026).
${k}`,run({core:e,values:r,env:n}){if(r.json&&r.human)throw new f("--json and --human exclude each other");let s=r.human||!r.json&&process.stdout.isTTY,{json:o,human:t,...l}=r;return $(e,"status",b(l,n),n,s?(i,c)=>ae(i,c,Date.now()):void 0)}},renew:{summary:"extend a lock holding's lease (one document: renewed, not-due, lost\u2026)",flags:{strings:[...ie,"outcome","retry-at",...N],booleans:["if-due"]},usage:`leasehold renew --lock L --nonce N [--if-due] [--repository owner/name] [--state-branch B]
                [--holder-id ID | --holder-suffix S] [--outcome success|rate-limited [--retry-at T]]
                [--api-max-attempts N \u2026]

Extends this claim's lease (the holding acquire made, told by its nonce), never past its
ceiling. --if-due writes only once the renewal is due. On a pool, --outcome says how the work on
the granted resource goes: rate-limited backs the resource off (until --retry-at, else 15 minutes
doubling per consecutive hit, up to 5 hours), success resets it. Prints one result document; exits by the
exit-code table (0 renewed or not-due, 13 lost, 20 transport, \u2026).
${k}`,run:a(({core:e,values:r,env:n})=>$(e,"renew",b(r,n),n),"run")},"report-usage":{summary:"record a usage reading of one resource of a pool (used fraction, window, observed at, status)",flags:{strings:["lock","repository","state-branch","resource","used","window-start","reset-at","observed-at","status",...N]},usage:`leasehold report-usage --lock L --resource R --used F --window-start T --reset-at T
                --observed-at T [--status allowed|throttled|rejected] [--repository owner/name]
                [--state-branch B] [--api-max-attempts N \u2026]

Records a usage reading of resource R of pool L: the used fraction F of its window (0 to 1), the
window's start and reset, and when it was observed (times in UTC, YYYY-MM-DDTHH:MM:SSZ). An
older reading never replaces a newer one (noop); a reading observed over 45 minutes ago, or of a
window that has reset, counts for nothing. Prints one result document; exits by the exit-code
table (0 recorded or noop, 3 the lock is not a pool or declares no such resource, 20 transport).
${k}`,run:a(({core:e,values:r,env:n})=>$(e,"report-usage",b(r,n),n),"run")},recover:{summary:"an operator's recovery: a quarantine becomes a cooldown, or the lock's incident ends (nothing written on a wrong id)",flags:{strings:L("recover",["resource-safe","confirmed"]),booleans:["resource-safe","confirmed"]},usage:`leasehold recover --operation recover --lock L --reservation-id ID --resource-safe
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
${k}`,run:a(({core:e,values:r,env:n})=>$(e,"recover",b(r,n),n),"run")},reap:{summary:"free what dead jobs left in one or more locks, proven from the Actions API",flags:{strings:["repository","state-branch","scan-deadline-seconds",...N],multiple:["lock"]},usage:`leasehold reap --lock L [--lock L2 \u2026] [--scan-deadline-seconds N] [--repository owner/name]
                [--state-branch B] [--api-max-attempts N \u2026]

Removes holdings and queue entries whose run attempt (or job) the Actions API proves over. Prints
one result document (its outcome.reaped lists every verdict); exits 0 when every entry was
judged, else by the table (20: the scan deadline passed; 21: GitHub refused).
${k}`,run:a(({core:e,values:r,env:n})=>$(e,"reap",b(r,n),n),"run")},repair:{summary:"rewrite a broken lock state as a valid empty one, fences kept increasing (dry run without --confirm)",flags:{strings:["lock","repository","state-branch",...N],booleans:["confirm"]},usage:`leasehold repair --lock L [--confirm] [--repository owner/name] [--state-branch B]

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
${k}`,run:a(({core:e,values:r,env:n})=>$(e,"repair",b(r,n),n),"run")},guard:{summary:"run a command under a lock holding, renewing it, stopping the command if it is lost",flags:{strings:[...ie,"kill-grace-seconds",...N],child:!0},usage:`leasehold guard --lock L --nonce N [--kill-grace-seconds N] [--repository owner/name]
                [--state-branch B] [--holder-id ID | --holder-suffix S] -- command [args\u2026]

Verifies the holding with a renewal, runs the command (no shell, its own process group), renews
on the lease's schedule and stops the group (SIGTERM, SIGKILL after the kill grace) when the
holding is proven lost or the local deadline passes unproven. Prints a guard-start line before
the command runs and a guard-exit (or guard-refused) line at the end, on stdout beside the
command's own output. Exit: the command's own code (128 + n when signal n ended it, 127 when it
could not start); 13 lost or the local deadline passed (the line's reason says which); 14 the
holding could not be verified (the command never ran); 2 usage. The command's environment
carries no credential.
${k}`,async run({core:e,values:r,child:n,env:s}){if(n.length===0)throw new f("guard needs a command after --");let o=b(r,s),{plan:t,machine:l}=W(e,o);for(let p of t.warnings)y.warning(E(p));let i=S(s),c=v({baseUrl:x(s),token:i,repository:t.repository}),{exitCode:m}=await M({core:e,machine:l,inputs:o,argv:n,perform:c,emit:a(p=>O(p),"emit"),logger:y,secrets:[i]});return m}}};import{parseArgs as xe}from"node:util";var ce="slots allocate",ve="leasehold slots allocate --namespace N --prefix P [--repository owner/name] [--dry-run]",B=`usage: leasehold slots allocate --namespace N --prefix P [--repository owner/name] [--dry-run]

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
12 unknown outcome, 16 stale, 20 transport, 21 permission).`,de={namespace:{type:"string"},prefix:{type:"string"},repository:{type:"string"},"dry-run":{type:"boolean"},help:{type:"boolean"}},J={debug:a(e=>process.env.LEASEHOLD_DEBUG?console.error(`debug: ${e}`):void 0,"debug"),info:a(e=>console.error(e),"info"),warning:a(e=>console.error(`warning: ${e}`),"warning")};function ue(e){return process.stdout.write(`${JSON.stringify(e)}
`),e.exitCode}a(ue,"print");function K(e,r){return console.error(`leasehold: ${r}`),ue(A().refusalDocument(ce,e,r))}a(K,"refuse");function Ne(e){return!e.input||!e.rule?e.message:`${Object.hasOwn(de,e.input)?`--${e.input}`:`environment variable ${e.input}`} ${e.rule}${e.value?` (got ${JSON.stringify(e.value)})`:""}`}a(Ne,"inputMessage");async function Oe(e,r=process.env){let n=A(),[s,...o]=e;if(s!=="allocate")return s==="--help"||s==="help"?(console.log(B),0):K("invalid-input",`unknown slots command ${JSON.stringify(s??"")}
${B}`);let t;try{({values:t}=xe({args:o,options:de,strict:!0,allowPositionals:!1}))}catch(d){return K("invalid-input",`${d.message}
${B}`)}if(t.help)return console.log(B),0;let l={};for(let d of["namespace","prefix","repository"])t[d]!==void 0&&(l[d]=t[d]);t["dry-run"]&&(l["dry-run"]="true");for(let d of V)r[d]&&(l[d]=r[d]);let i;try{i=new n.Operation("slot-allocate",l,void 0)}catch(d){if(d.code==="invalid-input")return K(d.code,Ne(d));throw d}for(let d of i.plan.warnings)J.warning(d);let c=(r.LEASEHOLD_TOKEN||r.GITHUB_TOKEN||"").trim();if(!c)return K("invalid-input","set GITHUB_TOKEN (or LEASEHOLD_TOKEN) to a token that can create refs in the repository");let m=v({baseUrl:x(r),token:c,repository:i.plan.repository}),p=await I({op:i,perform:m,logger:J}),g=n.resultDocument(ce,p);return J.info(`leasehold: ${g.status}${g.slot?.detail?`: ${g.slot.detail}`:""}`),ue(g)}a(Oe,"slots");var me={summary:"allocate the next never-recycled slot number of a namespace and prefix",usage:ve,run:a(({argv:e,env:r})=>Oe(e,r),"run")};var G={...le,claims:j,slots:me,validate:X,...ee};function $e(e){let r=Math.max(...Object.keys(G).map(t=>t.length)),n=Object.entries(G).map(([t,l])=>`  ${t.padEnd(r)}  ${l.summary}`),s=Object.keys(j.verbs).map(t=>`  claims ${t}`),o=e.exitTable.map(t=>`  ${String(t.exitCode).padStart(2)}  ${t.status.padEnd(16)} ${t.action}`);return`usage: leasehold <command> [flags]   (node dist/cli.mjs \u2026; <command> --help for one)

Commands:
${n.join(`
`)}

Claims verbs:
${s.join(`
`)}

Exit codes (one table for every command):
${o.join(`
`)}
`}a($e,"overview");async function Te(e,r){let n=A(),[s,...o]=e;if(s==="--help"||s==="-h"||s==="help")return process.stdout.write($e(n)),0;let t=G[s],l=s==="claims"?j.commandName(o):t?.verbWords&&t.verbWords.includes(o[0])?`${s} ${o[0]}`:s??"";try{if(!t)throw new f(`unknown command ${JSON.stringify(s??"")} (known: ${Object.keys(G).join(", ")}; --help lists them)`);if(s==="claims"&&o[0]==="--help")return process.stdout.write(`usage: ${t.usage}
`),0;if(s==="claims"&&o.length===0)throw new f("claims needs a verb (leasehold claims --help lists them)");if(t.verbWords){let[i,...c]=o;if(i==="--help"||i==="-h")return process.stdout.write(`usage: ${t.usage}
`),0;if(!t.verbWords.includes(i))throw new f(`${s} needs a verb: ${t.verbWords.join(" | ")} (${s} --help)`);let{values:m}=D(c,t.flags);return m.help?(process.stdout.write(`usage: ${t.usage}
`),0):await t.run({core:n,values:m,env:r,verb:i})}if(t.flags){let{values:i,child:c,positionals:m}=D(o,t.flags);return i.help?(process.stdout.write(`usage: ${t.usage}
`),0):await t.run({core:n,values:i,child:c,positionals:m,env:r})}return await t.run({core:n,argv:o,env:r})}catch(i){!i.usage&&!i.code&&y.warning(i.stack??String(i));let c=z(n,l,i);return O(c),c.exitCode}}a(Te,"main");Te(process.argv.slice(2),process.env).then(e=>{process.exitCode=e});
