package tagger

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/optimize"
)

// crf is a linear-chain CRF over BIO labels (label 0 is O, then B- and I- of
// each type; see Labels), laid out as CRFsuite lays it out: a state feature
// is an (attribute, label) pair seen in the training data; the state features
// of attribute a are the range attrStart[a]..attrStart[a+1] of featLabel and
// of the weights; L*L transition weights follow the state weights.
type crf struct {
	L         int
	attrStart []int32
	featLabel []uint16
	w         []float64
}

func (c *crf) nState() int { return len(c.featLabel) }

// sequence is one training or tagging sequence as attribute ids: token t's
// attributes are attrs[off[t]:off[t+1]].
type sequence struct {
	attrs []int32
	off   []int32
	y     []int // gold labels; nil when tagging
}

func (s *sequence) len() int { return len(s.off) - 1 }

// stateScores fills score[t*L+j] with the summed weights of token t's state
// features for label j.
func (c *crf) stateScores(s *sequence, score []float64) {
	L := c.L
	clear(score[:s.len()*L])
	for t := 0; t < s.len(); t++ {
		row := score[t*L : (t+1)*L]
		for _, a := range s.attrs[s.off[t]:s.off[t+1]] {
			for f := c.attrStart[a]; f < c.attrStart[a+1]; f++ {
				row[c.featLabel[f]] += c.w[f]
			}
		}
	}
}

// viterbi returns the best label sequence. bias is added to every label's
// state score (MIST's recall bias: a positive bias on the non-O labels trades
// precision for recall); nil for none.
func (c *crf) viterbi(s *sequence, bias []float64, score []float64, back []int32) []int {
	T, L := s.len(), c.L
	if T == 0 {
		return nil
	}
	c.stateScores(s, score)
	if bias != nil {
		for t := 0; t < T; t++ {
			row := score[t*L : (t+1)*L]
			for j := range row {
				row[j] += bias[j]
			}
		}
	}
	// Transposed so that the loop over previous labels reads memory in
	// order. Decoding keeps to valid BIO sequences: an I- label only
	// continues a B- or I- of its own type.
	tr := c.w[c.nState():]
	transT := make([]float64, L*L)
	for j := 0; j < L; j++ {
		for i := 0; i < L; i++ {
			v := tr[i*L+j]
			if !validTransition(i, j) {
				v = math.Inf(-1)
			}
			transT[j*L+i] = v
		}
	}
	// O and B- labels may follow any label, but only a label scoring
	// within reach[top] of the best one at t-1 (top) can be the best
	// predecessor of any of them, or tie with it: reach[i] is the most a
	// transition into an O or B- label can gain over the one from i. The
	// bound is widened by a relative 1e-9 against rounding, so the search
	// over those candidates, in label order, returns what the exhaustive
	// search returns, ties to the lowest label included.
	reach := make([]float64, L)
	for j := 0; j < L; j++ {
		if j > 0 && j%2 == 0 {
			continue // an I- label: its two predecessors are compared apart
		}
		col := transT[j*L : (j+1)*L]
		best := slices.Max(col)
		for i, v := range col {
			reach[i] = max(reach[i], best-v)
		}
	}
	prev := make([]float64, L)
	cur := make([]float64, L)
	copy(prev, score[:L])
	for j := 2; j < L; j += 2 {
		prev[j] = math.Inf(-1)
	}
	cand := make([]int, 0, L)
	for t := 1; t < T; t++ {
		top := 0
		for i := 1; i < L; i++ {
			if prev[i] > prev[top] {
				top = i
			}
		}
		floor := prev[top] - reach[top]
		floor -= 1e-9 * (math.Abs(prev[top]) + reach[top])
		cand = cand[:0]
		for i, v := range prev {
			if v >= floor {
				cand = append(cand, i)
			}
		}
		if len(cand) == 0 { // scores that are not numbers: search them all
			for i := range prev {
				cand = append(cand, i)
			}
		}
		row := score[t*L : (t+1)*L]
		bk := back[t*L : (t+1)*L]
		for j := 0; j < L; j++ {
			col := transT[j*L : (j+1)*L]
			var (
				best float64
				arg  int
			)
			if j > 0 && j%2 == 0 {
				// An I- label has two possible predecessors.
				best, arg = prev[j-1]+col[j-1], j-1
				if v := prev[j] + col[j]; v > best {
					best, arg = v, j
				}
			} else {
				best, arg = prev[cand[0]]+col[cand[0]], cand[0]
				for _, i := range cand[1:] {
					if v := prev[i] + col[i]; v > best {
						best, arg = v, i
					}
				}
			}
			cur[j] = best + row[j]
			bk[j] = int32(arg)
		}
		prev, cur = cur, prev
	}
	y := make([]int, T)
	best := math.Inf(-1)
	for j := 0; j < L; j++ {
		if prev[j] > best {
			best, y[T-1] = prev[j], j
		}
	}
	for t := T - 1; t > 0; t-- {
		y[t-1] = int(back[t*L+y[t]])
	}
	return y
}

// validTransition tells whether label j may follow label i in BIO: I-k
// (even j > 0) only after B-k or I-k.
func validTransition(i, j int) bool {
	if j == 0 || j%2 == 1 {
		return true
	}
	return i == j || i == j-1
}

// workspace is one worker's scratch memory for forward-backward.
type workspace struct {
	state, alpha, beta []float64
	scale              []float64
	u, uOB, aOB        []float64
	// accOB (L×H) and accI (by predecessor) accumulate the transition
	// expectations before multiplying by exp(w), laid out as transitions.
	accOB blas64.General
	accI  []float64
	grad  []float64
	loss  float64
}

func newWorkspace(nWeights, L int) *workspace {
	H := (L + 1) / 2
	return &workspace{
		grad:  make([]float64, nWeights),
		accOB: blas64.General{Rows: L, Cols: H, Stride: H, Data: make([]float64, L*H)},
		accI:  make([]float64, L),
		u:     make([]float64, L),
		uOB:   make([]float64, H),
		aOB:   make([]float64, H),
	}
}

func (ws *workspace) ensure(T, L int) {
	if cap(ws.state) < T*L {
		ws.state = make([]float64, T*L)
		ws.alpha = make([]float64, T*L)
		ws.beta = make([]float64, T*L)
		ws.scale = make([]float64, T)
	}
	ws.state, ws.alpha, ws.beta, ws.scale = ws.state[:T*L], ws.alpha[:T*L], ws.beta[:T*L], ws.scale[:T]
}

// transitions holds exp of the transition weights (0 where BIO forbids the
// transition) in full, L×L, and again as the L×H matrix of the columns of
// the labels any label may precede (O and every B-; obLabel maps a column
// to its label), contiguous so that forward-backward sums over predecessors
// with BLAS matrix-vector products. An I- label's two predecessors are read
// from full.
type transitions struct {
	full []float64
	ob   blas64.General
}

// obLabel is the label of column k of transitions.ob: O, then B- of each
// type.
func obLabel(k int) int { return max(2*k-1, 0) }

// iLabel is the I- label that label i > 0 may precede: its own type's.
func iLabel(i int) int { return i + i%2 }

func newTransitions(w []float64, L int) *transitions {
	H := (L + 1) / 2
	tr := &transitions{
		full: make([]float64, L*L),
		ob:   blas64.General{Rows: L, Cols: H, Stride: H, Data: make([]float64, L*H)},
	}
	for i := 0; i < L; i++ {
		for j := 0; j < L; j++ {
			if validTransition(i, j) {
				tr.full[i*L+j] = math.Exp(w[i*L+j])
			}
		}
		for k := 0; k < H; k++ {
			tr.ob.Data[i*H+k] = tr.full[i*L+obLabel(k)]
		}
	}
	return tr
}

// addSequence adds one sequence's negative log-likelihood to ws.loss and its
// model expectations to ws.grad (state part) and ws.accOB and ws.accI
// (transitions, before multiplying by exp(w)).
func (c *crf) addSequence(s *sequence, tr *transitions, cost *marginCost, ws *workspace) {
	T, L := s.len(), c.L
	if T == 0 {
		return
	}
	ws.ensure(T, L)
	st := ws.state
	c.stateScores(s, st)
	if cost != nil {
		for t := 0; t < T; t++ {
			row := st[t*L : (t+1)*L]
			g := s.y[t]
			for j := range row {
				switch {
				case j == g:
				case j == 0:
					row[j] += cost.missed
				default:
					row[j] += cost.wrong
				}
			}
		}
	}
	// The gold path's score: a wrong label's cost is not on it.
	gold := 0.0
	trans := c.w[c.nState():]
	for t := 0; t < T; t++ {
		gold += st[t*L+s.y[t]]
		if t > 0 {
			gold += trans[s.y[t-1]*L+s.y[t]]
		}
	}
	ws.loss += ws.forwardBackward(T, L, tr, true) - gold
	// State expectations: marginal p_t(j) = alpha_t(j) * beta_t(j).
	al, be := ws.alpha, ws.beta
	for t := 0; t < T; t++ {
		a := al[t*L : (t+1)*L]
		b := be[t*L : (t+1)*L]
		for _, at := range s.attrs[s.off[t]:s.off[t+1]] {
			for f := c.attrStart[at]; f < c.attrStart[at+1]; f++ {
				l := c.featLabel[f]
				ws.grad[f] += a[l] * b[l]
			}
		}
	}
}

// marginals returns p[t*L+j], the model's probability that token t has
// label j, over the label sequences decoding can produce.
func (c *crf) marginals(s *sequence, tr *transitions, ws *workspace) []float64 {
	T, L := s.len(), c.L
	if T == 0 {
		return nil
	}
	ws.ensure(T, L)
	c.stateScores(s, ws.state)
	ws.forwardBackward(T, L, tr, false)
	p := make([]float64, T*L)
	for i := range p {
		p[i] = ws.alpha[i] * ws.beta[i]
	}
	return p
}

// forwardBackward runs the scaled forward and backward passes over the T×L
// state scores in ws.state (left as exp of the scores shifted by each
// token's maximum) and returns log Z. Afterwards alpha_t(j)*beta_t(j) in
// ws.alpha and ws.beta is the marginal probability of label j at token t.
// With accumulate, the backward pass also adds the transition expectations
// to ws.accOB and ws.accI, as alpha_t(i)*u_{t+1}(j), to be multiplied by
// exp(w_ij) once per evaluation (training's gradient).
func (ws *workspace) forwardBackward(T, L int, tr *transitions, accumulate bool) float64 {
	st := ws.state
	// exp of the state scores shifted by their maximum (kept in logZ) so
	// that no exp overflows.
	logZ := 0.0
	for t := 0; t < T; t++ {
		row := st[t*L : (t+1)*L]
		m := row[0]
		for _, v := range row[1:] {
			m = max(m, v)
		}
		logZ += m
		for j := range row {
			row[j] = math.Exp(row[j] - m)
		}
	}
	// Forward pass with per-position normalization.
	al := ws.alpha
	for t := 0; t < T; t++ {
		a := al[t*L : (t+1)*L]
		if t == 0 {
			copy(a, st[:L])
			for j := 2; j < L; j += 2 {
				a[j] = 0 // no I- label opens a sequence
			}
		} else {
			// O and B- labels may follow any label; I-k only B-k or I-k.
			prev := al[(t-1)*L : t*L]
			blas64.Gemv(blas.Trans, 1, tr.ob, vec(prev), 0, vec(ws.aOB))
			for k, v := range ws.aOB {
				a[obLabel(k)] = v
			}
			for j := 2; j < L; j += 2 {
				a[j] = prev[j-1]*tr.full[(j-1)*L+j] + prev[j]*tr.full[j*L+j]
			}
			srow := st[t*L : (t+1)*L]
			for j := range a {
				a[j] *= srow[j]
			}
		}
		z := 0.0
		for _, v := range a {
			z += v
		}
		logZ += math.Log(z)
		ws.scale[t] = 1 / z
		for j := range a {
			a[j] *= ws.scale[t]
		}
	}
	// Backward pass, scaled by the forward pass's normalizers.
	be := ws.beta
	last := be[(T-1)*L : T*L]
	for j := range last {
		last[j] = 1
	}
	u, uOB := ws.u[:L], ws.uOB
	for t := T - 2; t >= 0; t-- {
		nb := be[(t+1)*L : (t+2)*L]
		srow := st[(t+1)*L : (t+2)*L]
		sc := ws.scale[t+1]
		for j := range u {
			u[j] = srow[j] * nb[j] * sc
		}
		for k := range uOB {
			uOB[k] = u[obLabel(k)]
		}
		b := be[t*L : (t+1)*L]
		a := al[t*L : (t+1)*L]
		blas64.Gemv(blas.NoTrans, 1, tr.ob, vec(uOB), 0, vec(b))
		if accumulate {
			blas64.Ger(1, vec(a), vec(uOB), ws.accOB)
		}
		for i := 1; i < L; i++ {
			j := iLabel(i)
			b[i] += tr.full[i*L+j] * u[j]
			if accumulate {
				ws.accI[i] += a[i] * u[j]
			}
		}
	}
	return logZ
}

// TrainOptions are the CRF's training hyperparameters.
type TrainOptions struct {
	// L2 is the coefficient c2 of the penalty c2*||w||^2 (CRFsuite's c2).
	L2 float64 `json:"l2"`
	// MaxIterations bounds the L-BFGS steps taken from the starting point
	// (CRFsuite's max_iterations).
	MaxIterations int `json:"max_iterations"`
	// Epsilon stops training when the objective improved by less than this
	// fraction over Period iterations (CRFsuite's delta and period).
	Epsilon float64 `json:"epsilon"`
	Period  int     `json:"period"`
	// GradientThreshold stops training when the gradient's infinity norm is
	// below it.
	GradientThreshold float64 `json:"gradient_threshold"`
	// Memory is the number of L-BFGS correction pairs.
	Memory int `json:"memory"`
	// Workers is the number of goroutines computing the gradient. The sums are
	// taken over fixed shards in a fixed order, so a model depends on Workers
	// but never on scheduling: the same data and options give the same model.
	Workers int `json:"workers"`
	// MinFreq drops attributes seen fewer times in training.
	MinFreq int `json:"min_freq"`
	// PruneBelow drops, once trained, the attributes whose every weight is
	// smaller than this in magnitude: none can move a label's score by as
	// much, and a smaller attribute table is a faster lookup when tagging.
	// 0 keeps them all.
	PruneBelow float64 `json:"prune_below,omitempty"`
	// Margin and MissedMargin make training softmax-margin (Gimpel and
	// Smith 2010): every wrong label of a token scores Margin more while
	// the normalizer is summed, O on a PHI token MissedMargin more, so that
	// training keeps a margin the larger where a mistake costs more (a
	// missed PHI token most: recall-oriented learning). Both 0 is plain
	// maximum likelihood.
	Margin       float64 `json:"margin,omitempty"`
	MissedMargin float64 `json:"missed_margin,omitempty"`
}

// marginCost is the cost softmax-margin training adds to a wrong label.
type marginCost struct{ wrong, missed float64 }

// DefaultTraining are the training options the accuracy figures were
// measured with.
func DefaultTraining() TrainOptions {
	return TrainOptions{
		L2: 0.1, MaxIterations: 150, Epsilon: 1e-4, Period: 10,
		GradientThreshold: 1e-6, Memory: 6, Workers: 2, MinFreq: 1, Margin: 1, PruneBelow: 1e-3,
	}
}

func (o TrainOptions) validate() error {
	switch {
	case o.L2 < 0 || math.IsNaN(o.L2):
		return fmt.Errorf("l2 must be >= 0")
	case o.MaxIterations < 1:
		return fmt.Errorf("max_iterations must be >= 1")
	case o.Period < 1 || o.Epsilon < 0:
		return fmt.Errorf("period must be >= 1 and epsilon >= 0")
	case o.Memory < 1:
		return fmt.Errorf("memory must be >= 1")
	case o.Workers < 1 || o.Workers > 256:
		return fmt.Errorf("workers %d out of range [1, 256]", o.Workers)
	case o.MinFreq < 1:
		return fmt.Errorf("min_freq must be >= 1")
	case !(o.PruneBelow >= 0 && o.PruneBelow < 1):
		return fmt.Errorf("prune_below must be in [0, 1)")
	case !(o.Margin >= 0 && o.Margin <= 100) || !(o.MissedMargin >= 0 && o.MissedMargin <= 100):
		return fmt.Errorf("margin and missed_margin must be in [0, 100]")
	}
	return nil
}

// IterationInfo reports one L-BFGS iteration to a progress callback.
type IterationInfo struct {
	Iteration int
	Loss      float64 // objective: negative log-likelihood plus penalty
	GradNorm  float64 // infinity norm of the gradient
}

// objective evaluates the penalized negative log-likelihood and its gradient
// over the training sequences, spread over workers.
type objective struct {
	c      *crf
	seqs   []sequence
	shards [][2]int // sequence ranges, one per worker
	emp    []float64
	l2     float64
	cost   *marginCost
	ws     []*workspace

	lastX    []float64
	lastF    float64
	lastGrad []float64
	have     bool
}

func newObjective(c *crf, seqs []sequence, l2 float64, workers int) *objective {
	o := &objective{c: c, seqs: seqs, l2: l2}
	// Shards of about equal token counts, contiguous so that each worker
	// sums its sequences in corpus order.
	total := 0
	for i := range seqs {
		total += seqs[i].len()
	}
	start, acc := 0, 0
	for i := range seqs {
		acc += seqs[i].len()
		if acc*workers >= total*(len(o.shards)+1) && len(o.shards) < workers-1 {
			o.shards = append(o.shards, [2]int{start, i + 1})
			start = i + 1
		}
	}
	o.shards = append(o.shards, [2]int{start, len(seqs)})
	n := len(c.w)
	L := c.L
	for range o.shards {
		o.ws = append(o.ws, newWorkspace(n, L))
	}
	// Empirical counts do not depend on the weights.
	o.emp = make([]float64, n)
	ns := c.nState()
	for si := range seqs {
		s := &seqs[si]
		for t := 0; t < s.len(); t++ {
			y := uint16(s.y[t])
			for _, a := range s.attrs[s.off[t]:s.off[t+1]] {
				for f := c.attrStart[a]; f < c.attrStart[a+1]; f++ {
					if c.featLabel[f] == y {
						o.emp[f]++
					}
				}
			}
			if t > 0 {
				o.emp[ns+s.y[t-1]*L+s.y[t]]++
			}
		}
	}
	return o
}

func (o *objective) evaluate(x []float64) {
	if o.have && equal(x, o.lastX) {
		return
	}
	c := o.c
	copy(c.w, x)
	L := c.L
	ns := c.nState()
	// Invalid BIO transitions get probability 0: training normalizes over
	// the label sequences decoding can produce, and their weights, which
	// no gold sequence uses, stay at 0.
	tr := newTransitions(c.w[ns:], L)
	var wg sync.WaitGroup
	for k, sh := range o.shards {
		ws := o.ws[k]
		wg.Add(1)
		go func() {
			defer wg.Done()
			clear(ws.grad)
			clear(ws.accOB.Data)
			clear(ws.accI)
			ws.loss = 0
			for i := sh[0]; i < sh[1]; i++ {
				c.addSequence(&o.seqs[i], tr, o.cost, ws)
			}
		}()
	}
	wg.Wait()
	if o.lastGrad == nil {
		o.lastGrad = make([]float64, len(x))
		o.lastX = make([]float64, len(x))
	}
	g := o.lastGrad
	f := 0.0
	copy(g, o.ws[0].grad)
	f += o.ws[0].loss
	for k := 1; k < len(o.ws); k++ {
		f += o.ws[k].loss
		for i, v := range o.ws[k].grad[:ns] {
			g[i] += v
		}
	}
	for i := ns; i < len(g); i++ {
		g[i] = 0
	}
	H := tr.ob.Cols
	for _, ws := range o.ws {
		for i := 0; i < L; i++ {
			for k := 0; k < H; k++ {
				j := i*L + obLabel(k)
				g[ns+j] += ws.accOB.Data[i*H+k] * tr.full[j]
			}
			if i > 0 {
				j := i*L + iLabel(i)
				g[ns+j] += ws.accI[i] * tr.full[j]
			}
		}
	}
	for i, wi := range x {
		g[i] += 2*o.l2*wi - o.emp[i]
		f += o.l2 * wi * wi
	}
	o.lastF = f
	copy(o.lastX, x)
	o.have = true
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// recorder forwards major iterations to the progress callback and stops the
// optimizer when the context is cancelled. gonum reports the starting point
// as a major iteration too; iter counts it as iteration 0. gonum does not
// record the iteration that ends the run, so fit counts steps from its
// result.
type recorder struct {
	ctx      context.Context
	progress func(IterationInfo)
	iter     int
}

func (r *recorder) Init() error { return nil }

func (r *recorder) Record(loc *optimize.Location, op optimize.Operation, _ *optimize.Stats) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	if op == optimize.MajorIteration {
		r.iter++
		if r.progress != nil {
			gn := 0.0
			for _, v := range loc.Gradient {
				gn = max(gn, math.Abs(v))
			}
			r.progress(IterationInfo{Iteration: r.iter, Loss: loc.F, GradNorm: gn})
		}
	}
	return nil
}

// fit trains c's weights (starting from zero) on seqs with L-BFGS.
func (c *crf) fit(ctx context.Context, seqs []sequence, opt TrainOptions, progress func(IterationInfo)) (iterations int, loss float64, err error) {
	obj := newObjective(c, seqs, opt.L2, opt.Workers)
	if opt.Margin != 0 || opt.MissedMargin != 0 {
		obj.cost = &marginCost{wrong: opt.Margin, missed: opt.MissedMargin}
	}
	p := optimize.Problem{
		Func: func(x []float64) float64 {
			obj.evaluate(x)
			return obj.lastF
		},
		Grad: func(g, x []float64) {
			obj.evaluate(x)
			copy(g, obj.lastGrad)
		},
	}
	rec := &recorder{ctx: ctx, progress: progress, iter: -1}
	settings := &optimize.Settings{
		GradientThreshold: opt.GradientThreshold,
		// +1: gonum counts the starting point as a major iteration, and
		// max_iterations means steps, as in CRFsuite.
		MajorIterations: opt.MaxIterations + 1,
		Converger:       &optimize.FunctionConverge{Relative: opt.Epsilon, Iterations: opt.Period},
		Recorder:        rec,
	}
	x0 := make([]float64, len(c.w))
	res, err := optimize.Minimize(p, x0, settings, &optimize.LBFGS{Store: opt.Memory})
	if err != nil && res == nil {
		return max(rec.iter, 0), 0, err
	}
	steps := max(res.Stats.MajorIterations-1, 0) // the starting point is not a step
	if cerr := ctx.Err(); cerr != nil {
		return steps, 0, cerr
	}
	if err != nil {
		// A failed line search near the optimum still leaves the best point
		// found, which is what CRFsuite keeps too.
		if res.X == nil {
			return steps, 0, err
		}
	}
	copy(c.w, res.X)
	return steps, res.F, nil
}

// vec views a slice as a BLAS vector.
func vec(x []float64) blas64.Vector { return blas64.Vector{N: len(x), Inc: 1, Data: x} }
