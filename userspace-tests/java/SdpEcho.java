/*
 * SdpEcho: a TCP server and client in plain java.net, for jdk_sdp.sh.  No
 * line of it knows SDP: the JDK's -Dcom.sun.sdp.conf rules move its sockets
 * onto family 27, as they moved any Java program in the days of classic SDP.
 *
 *   java SdpEcho server ADDR PORT
 *       listens on ADDR:PORT, prints "listening", accepts one connection,
 *       reads a length (8 bytes) and that many bytes, answers with their
 *       SHA-256 and closes
 *   java SdpEcho client ADDR PORT BYTES
 *       connects to ADDR:PORT, sends BYTES pseudo-random bytes after their
 *       length, and prints "sha256 HEX match" when the server's checksum is
 *       that of the bytes sent (exit status 0), "sha256 HEX mismatch" (1)
 *       when it is not
 */
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;

public final class SdpEcho {
    private static final int CHUNK = 65536;

    public static void main(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("server")) {
            server(args[1], Integer.parseInt(args[2]));
        } else if (args.length == 4 && args[0].equals("client")) {
            System.exit(client(args[1], Integer.parseInt(args[2]), Long.parseLong(args[3])) ? 0 : 1);
        } else {
            System.err.println("usage: SdpEcho server ADDR PORT | client ADDR PORT BYTES");
            System.exit(2);
        }
    }

    private static void server(String addr, int port) throws Exception {
        try (ServerSocket listener = new ServerSocket()) {
            listener.bind(new InetSocketAddress(addr, port));
            System.out.println("listening");
            System.out.flush();
            try (Socket s = listener.accept()) {
                DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
                MessageDigest md = MessageDigest.getInstance("SHA-256");
                byte[] buf = new byte[CHUNK];
                for (long left = in.readLong(); left > 0; ) {
                    int n = in.read(buf, 0, (int) Math.min(buf.length, left));
                    if (n < 0)
                        throw new EOFException("the client closed early");
                    md.update(buf, 0, n);
                    left -= n;
                }
                s.getOutputStream().write(md.digest());
                s.getOutputStream().flush();
            }
        }
    }

    private static boolean client(String addr, int port, long bytes) throws Exception {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(addr, port), 60000);
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), CHUNK));
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            Random random = new Random(bytes);
            byte[] buf = new byte[CHUNK];
            out.writeLong(bytes);
            for (long left = bytes; left > 0; ) {
                int n = (int) Math.min(buf.length, left);
                random.nextBytes(buf);
                md.update(buf, 0, n);
                out.write(buf, 0, n);
                left -= n;
            }
            out.flush();
            byte[] want = md.digest();
            byte[] got = new DataInputStream(s.getInputStream()).readNBytes(want.length);
            boolean match = Arrays.equals(want, got);
            System.out.println("sha256 " + HexFormat.of().formatHex(got) + (match ? " match" : " mismatch"));
            return match;
        } catch (IOException e) {
            System.out.println("client: " + e);
            return false;
        }
    }
}
