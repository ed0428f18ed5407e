//go:build !purego

#include "textflag.h"

// Each byte of a 32-byte block: "\n", "\r".
DATA lfs<>+0(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA lfs<>+8(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA lfs<>+16(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA lfs<>+24(SB)/8, $0x0a0a0a0a0a0a0a0a
GLOBL lfs<>(SB), RODATA|NOPTR, $32

DATA crs<>+0(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA crs<>+8(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA crs<>+16(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA crs<>+24(SB)/8, $0x0d0d0d0d0d0d0d0d
GLOBL crs<>(SB), RODATA|NOPTR, $32

// func lineEndAVX2(b []byte) int
//
// The offset of b's first "\n" or "\r", or -1; len(b) ≥ 32. The bytes
// after the last whole block are looked at in b's last 32 bytes, those
// already looked at masked off, so no read leaves b.
TEXT ·lineEndAVX2(SB), NOSPLIT, $0-32
	MOVQ    b_base+0(FP), SI
	MOVQ    b_len+8(FP), CX
	MOVQ    SI, DI
	LEAQ    -32(SI)(CX*1), R8 // the last block's start
	VMOVDQU lfs<>(SB), Y1
	VMOVDQU crs<>(SB), Y2

loop:
	CMPQ      SI, R8
	JA        last
	VMOVDQU   (SI), Y0
	VPCMPEQB  Y1, Y0, Y3
	VPCMPEQB  Y2, Y0, Y4
	VPOR      Y4, Y3, Y3
	VPMOVMSKB Y3, AX
	TESTL     AX, AX
	JNZ       found
	ADDQ      $32, SI
	JMP       loop

last:
	MOVQ      SI, CX
	SUBQ      R8, CX // the last block's bytes already looked at: 1 to 32
	CMPQ      CX, $32
	JEQ       none
	VMOVDQU   (R8), Y0
	VPCMPEQB  Y1, Y0, Y3
	VPCMPEQB  Y2, Y0, Y4
	VPOR      Y4, Y3, Y3
	VPMOVMSKB Y3, AX
	SHRL      CX, AX
	SHLL      CX, AX
	TESTL     AX, AX
	JZ        none
	MOVQ      R8, SI

found:
	BSFL       AX, AX
	ADDQ       AX, SI
	SUBQ       DI, SI
	MOVQ       SI, ret+24(FP)
	VZEROUPPER
	RET

none:
	MOVQ       $-1, ret+24(FP)
	VZEROUPPER
	RET
