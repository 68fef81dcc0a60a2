package tagger

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// The artifact is binary, little-endian, versioned:
//
//	magic "DEIDTAG\n", uint32 version, 32-byte SHA-256 of the content,
//	uint32 length + JSON Meta (training time etc., outside the hash),
//	content: uint32 length + JSON header (config, types, learnt lists,
//	sizes), then the attribute strings (uvarint length + bytes each), the
//	attribute offsets (int32), the feature labels (uint16) and the weights
//	(float64 bits).
//
// The hash covers exactly what tagging depends on, so two trainings with the
// same data and options give the same hash, and Load detects corruption.
const (
	magic     = "DEIDTAG\n"
	maxHeader = 1 << 30
)

// FormatVersion is the version of the model file format that Save writes and
// Load reads; the Model row records it.
const FormatVersion = 1

type header struct {
	Config     Config     `json:"config"`
	Types      []SpanType `json:"types"`
	Learnt     learnt     `json:"learnt"`
	Labels     int        `json:"labels"`
	Attributes int        `json:"attributes"`
	Features   int        `json:"features"`
}

// content encodes the hashed part of the model.
func (m *Model) content() ([]byte, error) {
	var b bytes.Buffer
	h, err := json.Marshal(header{
		Config: m.Config, Types: m.Types, Learnt: m.learnt,
		Labels: m.crf.L, Attributes: len(m.attrs), Features: len(m.crf.featLabel),
	})
	if err != nil {
		return nil, err
	}
	writeU32(&b, uint32(len(h)))
	b.Write(h)
	var tmp [binary.MaxVarintLen64]byte
	for _, a := range m.attrs {
		b.Write(tmp[:binary.PutUvarint(tmp[:], uint64(len(a)))])
		b.WriteString(a)
	}
	for _, v := range m.crf.attrStart {
		writeU32(&b, uint32(v))
	}
	for _, v := range m.crf.featLabel {
		b.Write(binary.LittleEndian.AppendUint16(tmp[:0], v))
	}
	for _, v := range m.crf.w {
		b.Write(binary.LittleEndian.AppendUint64(tmp[:0], math.Float64bits(v)))
	}
	return b.Bytes(), nil
}

func writeU32(w *bytes.Buffer, v uint32) {
	var tmp [4]byte
	binary.LittleEndian.PutUint32(tmp[:], v)
	w.Write(tmp[:])
}

// Hash is the hex SHA-256 of the model's content: its identity.
func (m *Model) Hash() string {
	c, err := m.content()
	if err != nil {
		// Marshalling plain values cannot fail; a model that cannot be
		// encoded has no identity to report.
		panic(err)
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:])
}

// Save writes the model artifact.
func (m *Model) Save(w io.Writer) error {
	c, err := m.content()
	if err != nil {
		return err
	}
	meta, err := json.Marshal(m.Meta)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString(magic)
	writeU32(&b, FormatVersion)
	sum := sha256.Sum256(c)
	b.Write(sum[:])
	writeU32(&b, uint32(len(meta)))
	b.Write(meta)
	if _, err := w.Write(b.Bytes()); err != nil {
		return err
	}
	_, err = w.Write(c)
	return err
}

// ErrFormat is returned (wrapped) by Load for input that is not a model
// artifact this version can read.
var ErrFormat = errors.New("not a tagger model")

// Load reads a model artifact written by Save and checks its hash.
func Load(r io.Reader) (*Model, error) {
	br := bufio.NewReader(r)
	var mg [len(magic)]byte
	if _, err := io.ReadFull(br, mg[:]); err != nil || string(mg[:]) != magic {
		return nil, fmt.Errorf("%w: bad magic", ErrFormat)
	}
	version, err := readU32(br)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if version != FormatVersion {
		return nil, fmt.Errorf("%w: format version %d, this build reads %d", ErrFormat, version, FormatVersion)
	}
	var want [sha256.Size]byte
	if _, err := io.ReadFull(br, want[:]); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	m := &Model{}
	metaJSON, err := readBlock(br)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(metaJSON, &m.Meta); err != nil {
		return nil, fmt.Errorf("%w: meta: %v", ErrFormat, err)
	}
	content, err := io.ReadAll(br)
	if err != nil {
		return nil, err
	}
	if sha256.Sum256(content) != want {
		return nil, fmt.Errorf("%w: content hash mismatch (corrupt file)", ErrFormat)
	}
	cr := bytes.NewReader(content)
	hj, err := readBlock(cr)
	if err != nil {
		return nil, err
	}
	var h header
	if err := json.Unmarshal(hj, &h); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrFormat, err)
	}
	if h.Labels != 1+2*len(h.Types) || h.Attributes < 0 || h.Features < 0 || h.Features > len(content) || h.Attributes > len(content) ||
		// The offsets, labels and weights must fit in what is left: checked
		// before allocating them, so a damaged header cannot ask for gigabytes.
		4*(h.Attributes+1)+2*h.Features+8*(h.Features+h.Labels*h.Labels) > cr.Len() {
		return nil, fmt.Errorf("%w: inconsistent sizes", ErrFormat)
	}
	m.Config, m.Types, m.learnt = h.Config, h.Types, h.Learnt
	m.attrs = make([]string, h.Attributes)
	for i := range m.attrs {
		n, err := binary.ReadUvarint(cr)
		if err != nil || n > uint64(cr.Len()) {
			return nil, fmt.Errorf("%w: attribute %d", ErrFormat, i)
		}
		buf := make([]byte, n)
		io.ReadFull(cr, buf)
		m.attrs[i] = string(buf)
	}
	c := &crf{L: h.Labels, attrStart: make([]int32, h.Attributes+1), featLabel: make([]uint16, h.Features), w: make([]float64, h.Features+h.Labels*h.Labels)}
	if err := binary.Read(cr, binary.LittleEndian, c.attrStart); err != nil {
		return nil, fmt.Errorf("%w: offsets: %v", ErrFormat, err)
	}
	if err := binary.Read(cr, binary.LittleEndian, c.featLabel); err != nil {
		return nil, fmt.Errorf("%w: labels: %v", ErrFormat, err)
	}
	if err := binary.Read(cr, binary.LittleEndian, c.w); err != nil {
		return nil, fmt.Errorf("%w: weights: %v", ErrFormat, err)
	}
	for i, s := range c.attrStart {
		if s < 0 || int(s) > h.Features || (i > 0 && s < c.attrStart[i-1]) {
			return nil, fmt.Errorf("%w: attribute offsets out of order", ErrFormat)
		}
	}
	for _, l := range c.featLabel {
		if int(l) >= h.Labels {
			return nil, fmt.Errorf("%w: feature label out of range", ErrFormat)
		}
	}
	m.crf = c
	m.attrIndex = make(map[string]int32, len(m.attrs))
	for i, a := range m.attrs {
		m.attrIndex[a] = int32(i)
	}
	if err := m.Config.Validate(); err != nil {
		return nil, err
	}
	if err := m.init(); err != nil {
		return nil, err
	}
	return m, nil
}

func readU32(r io.Reader) (uint32, error) {
	var tmp [4]byte
	if _, err := io.ReadFull(r, tmp[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(tmp[:]), nil
}

func readBlock(r io.Reader) ([]byte, error) {
	n, err := readU32(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if n > maxHeader {
		return nil, fmt.Errorf("%w: block of %d bytes", ErrFormat, n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return b, nil
}
