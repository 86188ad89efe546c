// Netty 4.1 NIO echo server, one of the peers of benches/node/peers.mjs and memory.mjs.
//
//   java -Xmx512m -cp target/peers/netty/classes:target/peers/netty/lib/* NettyEcho [PORT] [HOST] [WORKERS]
//
// One boss thread accepts, one NIO worker thread (or WORKERS) echoes (Netty's EchoServer shape: write in
// channelRead, flush in channelReadComplete), TCP_NODELAY, backlog 1024, Netty's default pooled
// allocator. When the outbound buffer goes over its high-water mark the channel stops reading
// until it is writable again. Prints `listening PORT` once it accepts; exits on SIGTERM.

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetSocketAddress;

public final class NettyEcho {
  @ChannelHandler.Sharable
  static final class Echo extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ctx.write(msg, ctx.voidPromise());
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      ctx.flush();
      if (!ctx.channel().isWritable()) ctx.channel().config().setAutoRead(false);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      if (ctx.channel().isWritable()) ctx.channel().config().setAutoRead(true);
      ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  public static void main(String[] args) throws Exception {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    String host = args.length > 1 ? args[1] : "127.0.0.1";
    int workers = args.length > 2 ? Integer.parseInt(args[2]) : 1;
    EventLoopGroup boss = new NioEventLoopGroup(1);
    EventLoopGroup worker = new NioEventLoopGroup(workers);
    Echo echo = new Echo();
    try {
      Channel server = new ServerBootstrap()
          .group(boss, worker)
          .channel(NioServerSocketChannel.class)
          .option(ChannelOption.SO_BACKLOG, 1024)
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              ch.pipeline().addLast(echo);
            }
          })
          .bind(host, port).sync().channel();
      System.out.println("listening " + ((InetSocketAddress) server.localAddress()).getPort());
      System.out.flush();
      server.closeFuture().sync();
    } finally {
      worker.shutdownGracefully();
      boss.shutdownGracefully();
    }
  }
}
