import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as T,e as N,f as S,g as x,h as R}from"./shared-LUPKNVBY.mjs";import{b as f,d as B,e as C,f as m,g as G,h as L}from"./shared-65DRFUWA.mjs";import{c as y,d as k,e as b,f as _,h,i as O,k as D,l as j,m as H,n as d}from"./shared-TQ6RRQUR.mjs";import{a as u,b as P}from"./shared-W4ZUK67W.mjs";var U={check:"receipt-check",post:"receipt-post"};function M(o,t){let e=t.report??{},n={status:t.status,"exit-code":String(t.exitCode),detail:e.detail??t.error?.message??"",result:JSON.stringify(t)};switch(o){case"receipt":return{...n,skip:e.skip===!0?"true":"false",reason:e.reason??t.error?.code??"",identity:e.identity??"","comment-id":e.comment?String(e.comment):"",warnings:(e.warnings??[]).join(`
`)};case"check-head":return{...n,result:e.reason??t.status,"head-sha":e.headSha??"",document:JSON.stringify(t)};default:return{...n,issue:e.number?String(e.number):"",problem:e.problem??""}}}u(M,"outputsOf");function K(o,t,e){let n={};for(let r of D[o]){if(["token","job-token","operation"].includes(r))continue;let a=t[d(r)];a!==void 0&&a!==""&&(n[r]=a)}for(let r of H)t[r]&&(n[r]=t[r]);let i=(t[d("job-token")]??"").trim();return i&&(n["job-token"]=i===e?"true":"false"),n}u(K,"actionInputs");async function Q(o,t=process.env){let e=P(),n=(t[d("token")]??"").trim();n&&y(n);let i=(t[d("job-token")]??"").trim();i&&y(i);let r=(t[d("operation")]??"").trim(),a=o==="receipt"?`receipt ${r}`:o,l,s;try{let p=o==="receipt"?U[r]:o;if(!p)throw Object.assign(new Error(`input \`operation\` must be check or post (got ${JSON.stringify(r)})`),{code:"invalid-input"});l=new e.Operation(p,K(o,t,n),void 0);for(let c of l.plan.warnings)h(R(c));if(!n)throw Object.assign(new Error("input `token` is required"),{code:"invalid-input",input:"token"});let g=S({baseUrl:N(t),token:n,repository:l.plan.repository}),A=await T({op:l,perform:g,logger:{debug:u(c=>_(c),"debug"),info:u(c=>O(c),"info"),warning:u(c=>h(c),"warning")}});s=e.resultDocument(a,A);for(let c of s.report?.warnings??[])h(`leasehold ${a}: ${c}`);O(`leasehold ${a}: ${s.status} (${s.report?.reason??""})${s.report?.detail?`: ${s.report.detail}`:""}`);let q=M(o,s);for(let c of j[o])k(c,q[c]??"");o!=="receipt"&&!A.success&&b(`leasehold ${a}: ${s.status}${s.report?.detail?`: ${s.report.detail}`:""}`)}catch(p){s=e.refusalDocument(a,p.code??"internal",x(p));let g=M(o,s);for(let w of j[o])k(w,g[w]??"");b(`leasehold ${a}: ${x(p)}`)}finally{l?.free?.()}}u(Q,"runItemAction");var I=`Environment: GITHUB_TOKEN (or LEASEHOLD_TOKEN), GITHUB_API_URL, GITHUB_REPOSITORY,
GITHUB_RUN_ID.`;function E(o,t){let e={...C(t)};for(let[n,i]of Object.entries(o))n!=="help"&&(i===!0?e[n]="true":typeof i=="string"&&(e[n]=i));return e}u(E,"flagInputs");async function $(o,t,e,n,i){let r=new o.Operation(t,n,void 0);try{for(let p of r.plan.warnings)m.warning(L(p));let a=S({baseUrl:N(i),token:B(i),repository:r.plan.repository}),l=await T({op:r,perform:a,logger:m}),s=o.resultDocument(e,l);for(let p of s.report?.warnings??[])m.warning(p);return G(s),s.exitCode}finally{r.free?.()}}u($,"once");var v=["repository","number","run-id","head-sha","runs","heads","job-status","app-logins",...f],Z={receipt:{summary:"post this run's receipt after a success, or check whether a receipt lets this run skip",flags:{strings:v,booleans:["job-token"]},usage:`leasehold receipt check --number N [--run-id ID] [--head-sha SHA] [--app-logins L,\u2026]
                [--job-token] [--repository owner/name]
       leasehold receipt post --number N (--runs ID,\u2026 | --heads SHA,\u2026) --job-status success
                [--run-id ID] [--app-logins L,\u2026] [--job-token] [--repository owner/name]

check: reads the comments of issue or pull request N (100 a page, at most 10 pages) and says
skip only when a receipt names this run (or head), was written by the identity the token acts
as, not an App identity in --app-logins, and was never edited: status receipted (exit 10, skip
the work). Anything else is no-receipt (exit 0, do the work) with a warning naming why.
post: after an outright success (--job-status success; any other status, or none, is
not-posted), once per run, a comment naming exactly the runs or heads this run absorbed (posted,
already-posted; not-posted is a warning, exit 0).
--job-token says the token is the job's own GITHUB_TOKEN (GET /user refuses it; its login is
github-actions[bot]). Prints one result document.
${I}`,verbWords:Object.keys(U),run:u(({core:o,values:t,env:e,verb:n})=>$(o,U[n],`receipt ${n}`,E(t,e),e),"run")},"check-head":{summary:"check that a pull request is still open at the head a job was started for (30 s)",flags:{strings:["repository","pull-request","expected-head-sha",...f]},usage:`leasehold check-head --pull-request N --expected-head-sha SHA [--repository owner/name]

Reads pull request N (retrying within 30 s in all): current (exit 0) when it is open at SHA;
superseded (exit 10) when it closed or its head moved on; unverified-head (exit 17) when it
could not be read. Prints one result document.
${I}`,run:u(({core:o,values:t,env:e})=>$(o,"check-head","check-head",E(t,e),e),"run")},audit:{summary:"keep one alert issue for a problem (reaper-delivery): open, update, close",flags:{strings:["check","repository","workflow-repository","workflow","max-age-minutes","max-running-minutes",...f],booleans:["job-token"]},usage:`leasehold audit [--check reaper-delivery] [--workflow reap.yml] [--max-age-minutes 30]
                [--max-running-minutes 15] [--workflow-repository owner/name] [--job-token]
                [--repository owner/name]

reaper-delivery: the latest scheduled run of the reap workflow is older than the limit, ended
other than success, or has run too long. Keeps one open issue in --repository for it, found by
a hidden marker and by the token's own login (never by title): opened, updated when its body
changes, unchanged otherwise, closed when the problem clears; noop when there is nothing to do.
A failed or ambiguous read touches no issue and fails (ambiguous exit 16, transport 20,
permission 21). (incident is not available yet: it needs lifecycle incidents.)
${I}`,run:u(({core:o,values:t,env:e})=>$(o,"audit","audit",E(t,e),e),"run")}};export{Q as a,Z as b};
